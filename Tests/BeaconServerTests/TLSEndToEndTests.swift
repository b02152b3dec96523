import AsyncHTTPClient
import BeaconTesting
import Foundation
import NIOCore
import NIOSSL
import Testing

/// Issue 15: `proxima serve --tls-cert --tls-key` and `proxima gateway --ca-file`, with a CA and
/// a server certificate the test makes with openssl. A gateway that does not trust the CA stops
/// with a message about certificate verification instead of retrying for ever.
@Suite(.serialized) struct TLSEndToEndTests {
    static func openssl(_ arguments: [String], in folder: URL) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let finished = try await FinishedProcess.run(process, output: nil, errors: errors)
        let text = String(decoding: finished.standardError, as: UTF8.self)
        try #require(finished.status == 0, "openssl \(arguments.joined(separator: " ")): \(text)")
    }

    /// ca.pem, and server.pem / server.key for 127.0.0.1 signed by it.
    static func makeCertificates(in folder: URL) async throws {
        try await openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
                     "-out", "ca.pem", "-days", "2", "-subj", "/CN=Proxima test CA"], in: folder)
        try await openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
                     "-out", "server.csr", "-subj", "/CN=127.0.0.1"], in: folder)
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(to: folder.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
        try await openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
                     "-days", "2", "-extfile", "ext.cnf"], in: folder)
    }

    @Test func aGatewayPostsOverHTTPSOnlyToAServerItTrusts() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "openssl is needed (scripts/install-test-deps)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await Self.makeCertificates(in: folder)
        let path = { (name: String) in folder.appendingPathComponent(name).path }

        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(path("proxima.sqlite"))", instance: "tls",
            extra: ["--tls-cert", path("server.pem"), "--tls-key", path("server.key"),
                    "--sighting-max-age", "\(Date().timeIntervalSince1970 + 86_400)"])
        defer { server.stop() }
        #expect(base.scheme == "https")

        // Register a gateway over HTTPS with a client that trusts the test CA.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(path("ca.pem"))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        var request = HTTPClientRequest(url: base.absoluteString + "/v1/gateways")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(ProximaProcess.adminToken)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"name":"tls door"}"#))
        let registered = try await client.execute(request, timeout: .seconds(30))
        let registeredBody = try await registered.body.collect(upTo: 1 << 16)
        #expect(registered.status == .created)
        struct Registered: Decodable { var token: String }
        let token = try JSONDecoder().decode(Registered.self, from: Data(buffer: registeredBody)).token

        let scenario = BTVirt.packageRoot.appendingPathComponent("examples/retail.json").path
        let trusting = try ProximaProcess(["gateway", "--server", base.absoluteString, "--token", token, "--ca-file", path("ca.pem"),
                                           "--simulate", scenario, "--speed", "0", "--batch", "2000"])
        #expect(try await trusting.waitForExit(timeout: .seconds(120)) == 0, "\(trusting.outputText)")
        let posted = trusting.outputText.firstMatch(of: /posted (\d+) sightings/).flatMap { Int($0.1) } ?? 0
        #expect(posted > 0, "\(trusting.outputText)")

        var metrics = HTTPClientRequest(url: base.absoluteString + "/metrics")
        metrics.headers.add(name: "Authorization", value: "Bearer \(ProximaProcess.adminToken)")
        let text = String(buffer: try await client.execute(metrics, timeout: .seconds(30)).body.collect(upTo: 1 << 20))
        #expect(text.firstMatch(of: /proxima_sightings_ingested_total (\d+)/).flatMap { Int($0.1) } == posted)

        // Without the CA the gateway stops at once and says why.
        let doubting = try ProximaProcess(["gateway", "--server", base.absoluteString, "--token", token,
                                           "--simulate", scenario, "--speed", "0"])
        // As long as the trusting gateway's: a CI pass-1 host once took over 60 s to start it,
        // fail and exit (the message was there once it had).
        let status = try await doubting.waitForExit(timeout: .seconds(120))
        #expect(status != 0)
        #expect(doubting.outputText.contains("TLS certificate verification of the server failed"), "\(doubting.outputText)")
        // And a plain-HTTP client gets no answer from the HTTPS port.
        var plain = HTTPClientRequest(url: base.absoluteString.replacingOccurrences(of: "https://", with: "http://") + "/v1/health")
        plain.method = .GET
        await #expect(throws: (any Error).self) { _ = try await HTTPClient.shared.execute(plain, timeout: .seconds(10)) }
        try await client.shutdown()
    }

    @Test func aKeyThatIsNotTheCertificatesIsRefusedBeforeStarting() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-tls-bad-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await Self.makeCertificates(in: folder)
        let serve = try ProximaProcess(["serve", "--database", "sqlite:\(folder.path)/x.sqlite", "--port", "0",
                                        "--tls-cert", folder.appendingPathComponent("server.pem").path,
                                        "--tls-key", folder.appendingPathComponent("ca.key").path])
        let status = try await serve.waitForExit(timeout: .seconds(30))
        #expect(status != 0)
        #expect(serve.outputText.contains("--tls-key"), "\(serve.outputText)")
        let missing = try ProximaProcess(["serve", "--port", "0", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key"])
        #expect(try await missing.waitForExit(timeout: .seconds(30)) != 0)
        #expect(missing.outputText.contains("--tls-cert"), "\(missing.outputText)")
    }
}
