import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat

/// JSON requests to a Proxima server with a bearer token: what tools and tests that drive a
/// running server (seeding a registry, reading alerts) need, beside the gateway's own uploader.
public struct ServerJSONClient: Sendable {
    public let base: URL
    public let token: String
    /// How long one request may take before it is given up.
    public var timeout: TimeAmount
    /// Largest reply body read; a bigger one is an error rather than unbounded memory.
    public var replyLimit: Int

    /// A reply outside 2xx, with the server's body (which names the refused field).
    public struct Failure: Error, CustomStringConvertible {
        public var method: String
        public var path: String
        public var status: UInt
        public var body: String
        public var description: String { "\(method) \(path): the server answered \(status) \(body.prefix(500))" }
    }

    public init(base: URL, token: String, timeout: TimeAmount = .seconds(60), replyLimit: Int = 64 * 1024 * 1024) {
        self.base = base
        self.token = token
        self.timeout = timeout
        self.replyLimit = replyLimit
    }

    public func send<Body: Encodable, Reply: Decodable>(_ method: String, _ path: String, _ body: Body?, as reply: Reply.Type) async throws -> Reply {
        let encoded = try body.map { try JSONEncoder().encode($0) }
        return try JSONDecoder().decode(Reply.self, from: try await data(method, path, body: encoded))
    }

    /// The body of a 2xx answer as sent, for callers that print the server's JSON unchanged.
    public func data(_ method: String, _ path: String, body: Data? = nil) async throws -> Data {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        var request = HTTPClientRequest(url: root + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let reply = try await response.body.collect(upTo: replyLimit)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(method: method, path: path, status: response.status.code, body: String(buffer: reply))
        }
        return Data(buffer: reply)
    }

    public func get<Reply: Decodable>(_ path: String, as reply: Reply.Type) async throws -> Reply {
        try await send("GET", path, Optional<String>.none, as: reply)
    }
}
