// A stand-in for the one server type that the server's input decoders name but that needs
// Hummingbird (HTTP statuses). Only `Fuzz/run.sh batch` compiles this file; a change of its
// signature in Sources/BeaconServer/HTTP/APIError.swift breaks that build, not the fuzzing.
struct APIError: Error {
    enum Status { case badRequest, contentTooLarge }
    var status: Status
    var field: String
    var message: String

    init(_ status: Status, field: String, _ message: String) {
        self.status = status
        self.field = field
        self.message = message
    }
}
