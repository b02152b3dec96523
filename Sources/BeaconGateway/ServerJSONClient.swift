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
        public var description: String { "\(method) \(path): HTTP \(status): \(body)" }
    }

    public init(base: URL, token: String, timeout: TimeAmount = .seconds(60), replyLimit: Int = 64 * 1024 * 1024) {
        self.base = base
        self.token = token
        self.timeout = timeout
        self.replyLimit = replyLimit
    }

    public func send<Body: Encodable, Reply: Decodable>(_ method: String, _ path: String, _ body: Body?, as reply: Reply.Type) async throws -> Reply {
        var request = HTTPClientRequest(url: base.absoluteString + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let data = try await response.body.collect(upTo: replyLimit)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(method: method, path: path, status: response.status.code, body: String(buffer: data))
        }
        return try JSONDecoder().decode(Reply.self, from: data)
    }

    public func get<Reply: Decodable>(_ path: String, as reply: Reply.Type) async throws -> Reply {
        try await send("GET", path, Optional<String>.none, as: reply)
    }
}
