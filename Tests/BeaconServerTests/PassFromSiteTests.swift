@testable import BeaconServer
import BeaconTesting
import Foundation
import Testing

/// `proxima pass create --site`: the pass carries the site's deployed beacons as the registry
/// of a real `proxima serve --demo` lists them.
@Suite("proxima pass create --site")
struct PassFromSiteTests {
    @Test func aPassCarriesTheDeployedBeaconsOfTheSite() async throws {
        let chain = try TestPassCertificates.make()
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(chain.path("proxima.sqlite"))", instance: "passes", extra: ["--demo"])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        let deployed = try await admin.get("/v1/beacons?site=\(site.id)", as: [Beacon].self).filter { $0.state == .deployed }
        try #require(!deployed.isEmpty && deployed.count <= 10)
        let template = try chain.writeTemplate()
        let signing = ["--template", template.path, "--cert", chain.path("pass.pem"), "--key", chain.path("pass.key"), "--wwdr", chain.path("wwdr.pem")]

        let create = try ProximaProcess(["pass", "create", "--site", "\(site.id)", "--server", base.absoluteString, "--token", ProximaProcess.adminToken,
                                         "--relevant-text", "Welcome to \(site.name)", "-o", chain.path("site.pkpass")] + signing)
        #expect(try await create.waitForExit(timeout: .seconds(60)) == 0, "\(create.outputText)")
        let inspect = try ProximaProcess(["pass", "inspect", chain.path("site.pkpass"), "--ca", chain.path("ca.pem"), "--json"])
        #expect(try await inspect.waitForExit(timeout: .seconds(60)) == 0, "\(inspect.outputText)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(inspect.outputText.utf8)) as? [String: Any])
        let carried = Set(try #require(report["beacons"] as? [String]))
        #expect(carried == Set(deployed.map { "\($0.uuid.uuidString):\($0.major):\($0.minor)" }))

        // A site that does not exist is named, and no file is written.
        let missing = try ProximaProcess(["pass", "create", "--site", "9999", "--server", base.absoluteString, "--token", ProximaProcess.adminToken,
                                          "-o", chain.path("missing.pkpass")] + signing)
        #expect(try await missing.waitForExit(timeout: .seconds(60)) != 0)
        #expect(missing.outputText.contains("--site"), "\(missing.outputText)")
        #expect(!FileManager.default.fileExists(atPath: chain.path("missing.pkpass")))
    }
}
