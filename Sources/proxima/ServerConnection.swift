import ArgumentParser
import BeaconGateway
import Foundation

/// `--server` and `--token`: the proxima server a command talks to, shared by every command
/// that is a client of one (device, messages, fleet, queues, check-ins, help requests, hunts,
/// offers).
struct ServerConnection: ParsableArguments {
    @Option(help: "The server's URL, e.g. http://127.0.0.1:8080.")
    var server: String

    @Option(help: "A token: operator or admin to change things, a read token to read, a device's own token for its own data (enrolment to register devices).")
    var token: String

    func validate() throws {
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--server: expected an http:// or https:// URL, found '\(server)'")
        }
    }

    /// Valid after `validate()`.
    var url: URL { URL(string: server)! }

    var client: ServerJSONClient { ServerJSONClient(base: url, token: token, timeout: .seconds(30)) }

    /// The body of a 2xx answer; any other is an error carrying the server's refusal, which names the field.
    func send(_ method: String, _ path: String, body: Data? = nil) async throws -> Data {
        try await client.data(method, path, body: body)
    }

    /// Prints the server's JSON with --json, otherwise the decoded value's lines.
    func show<Value: Decodable>(_ data: Data, json: Bool, as type: Value.Type, lines: (Value) -> [String]) throws {
        if json {
            try StandardOutput.line(String(decoding: data, as: UTF8.self))
            return
        }
        for line in lines(try JSONDecoder().decode(Value.self, from: data)) { try StandardOutput.line(line) }
    }
}
