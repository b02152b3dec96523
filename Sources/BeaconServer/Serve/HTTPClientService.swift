import AsyncHTTPClient
import ServiceLifecycle

/// The server's outgoing HTTP client (webhook deliveries) as a service: it stays up while the
/// HTTP server drains and is shut down after it, in the order of the service group.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try? await client.shutdown()
    }
}
