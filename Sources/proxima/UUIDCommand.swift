import ArgumentParser
import Foundation

struct NewUUID: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uuid",
        abstract: "Print a new random (version 4) UUID, as uuidgen does."
    )

    @Flag(help: "Print upper-case hex, as Apple's tools write UUIDs.")
    var uppercase = false

    func run() throws {
        let text = UUID().uuidString
        try StandardOutput.line(uppercase ? text : text.lowercased())
    }
}
