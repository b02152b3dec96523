import AsyncHTTPClient
import BeaconGateway
import BeaconServer
import Foundation
import NIOCore

/// Follows a help request's Server-Sent Events (`GET /v1/help-requests/{id}/events`): each change
/// is handed over as it arrives, so a visitor sees the acknowledgement the moment it is stored.
/// A dropped connection is opened again from the last change seen.
struct HelpRequestStream: Sendable {
    let server: URL
    let token: String
    let requestID: Int
    /// The longest line read; a longer one is an error rather than unbounded memory.
    static let lineLimit = 1 << 20

    /// The server refused the stream (or sent what is not one): trying again would not help.
    struct Refusal: Error, CustomStringConvertible {
        var path: String
        var status: UInt
        var body: String
        var description: String { "GET \(path): the server answered \(status) \(body.prefix(500))" }
    }

    /// Calls `handle` for each change until it returns false; the task's cancellation ends it too.
    func follow(_ handle: (HelpRequestChange) async throws -> Bool) async throws {
        var last = 0
        var failures = 0
        while !Task.isCancelled {
            do {
                if try await readOnce(after: &last, handle) { return }
                failures = 0
            } catch let failure as Refusal {
                throw failure
            } catch {
                if Task.isCancelled { return }
                failures += 1
                if failures > 30 { throw error }
                try await Task.sleep(for: .milliseconds(min(200 * failures, 2_000)))
            }
        }
    }

    /// One connection: true when `handle` said to stop.
    private func readOnce(after last: inout Int, _ handle: (HelpRequestChange) async throws -> Bool) async throws -> Bool {
        let root = server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
        let path = "/v1/help-requests/\(requestID)/events?after=\(last)"
        var request = HTTPClientRequest(url: root + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(24))
        guard response.status.code == 200 else {
            let body = try await response.body.collect(upTo: 64 * 1024)
            throw Refusal(path: path, status: response.status.code, body: String(buffer: body))
        }
        var pending: [UInt8] = []
        var data = ""
        for try await buffer in response.body {
            pending.append(contentsOf: buffer.readableBytesView)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("data: ") {
                    data += line.dropFirst(6)
                } else if line.isEmpty, !data.isEmpty {
                    let change = try JSONDecoder().decode(HelpRequestChange.self, from: Data(data.utf8))
                    data = ""
                    last = max(last, change.id)
                    if try await !handle(change) { return true }
                }
            }
            if pending.count > Self.lineLimit || data.utf8.count > Self.lineLimit {
                throw Refusal(path: path, status: 200, body: "an event longer than \(Self.lineLimit) bytes")
            }
        }
        return false
    }
}
