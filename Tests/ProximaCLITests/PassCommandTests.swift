import BeaconTesting
import BeaconWallet
import Foundation
import Testing

/// `proxima pass` against openssl: a chain the test makes, a pass that openssl and unzip accept,
/// and inspection that catches tampering and takes signatures openssl made.
@Suite(.serialized) struct PassCommandTests {
    static let uuid = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"

    static func tool(_ path: String, _ arguments: [String], in folder: URL) throws -> (status: Int32, output: String) {
        try TestPassCertificates.tool(path, arguments, in: folder)
    }

    static func create(_ chain: TestPassCertificates, beacons: String, output: String, key: String = "pass.key") async throws -> ProximaBinary.Outcome {
        let template = try chain.writeTemplate()
        let file = chain.folder.appendingPathComponent("beacons.csv")
        try beacons.write(to: file, atomically: true, encoding: .utf8)
        return try await ProximaBinary.run(["pass", "create", "--template", template.path, "--beacons", file.path, "--serial", "V-0001",
                                      "--cert", chain.path("pass.pem"), "--key", chain.path(key), "--wwdr", chain.path("wwdr.pem"),
                                      "-o", chain.path(output)])
    }

    @Test func aCreatedPassIsAcceptedByUnzipAndOpenSSLAndCarriesItsBeacons() async throws {
        let chain = try TestPassCertificates.make()
        let created = try await Self.create(chain, beacons: "uuid,major,minor,text\n\(Self.uuid),1,10,Welcome to Electronics\n\(Self.uuid),1,20,\n", output: "visitor.pkpass")
        try #require(created.status == 0, "\(created.standardError)")

        let tested = try Self.tool("/usr/bin/unzip", ["-t", "visitor.pkpass"], in: chain.folder)
        #expect(tested.status == 0, "\(tested.output)")
        let unpacked = chain.folder.appendingPathComponent("unpacked")
        let extracted = try Self.tool("/usr/bin/unzip", ["-q", "visitor.pkpass", "-d", unpacked.path], in: chain.folder)
        try #require(extracted.status == 0, "\(extracted.output)")

        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: unpacked.appendingPathComponent("manifest.json"))) as? [String: String])
        #expect(Set(manifest.keys) == ["pass.json", "icon.png", "en.lproj/pass.strings"])
        for (name, hash) in manifest {
            let summed = try Self.tool("/usr/bin/sha1sum", [name], in: unpacked)
            #expect(summed.output.split(separator: " ").first.map(String.init) == hash, "manifest hash of \(name)")
        }

        let verified = try Self.tool("/usr/bin/openssl", ["smime", "-verify", "-inform", "DER", "-binary", "-content", "manifest.json",
                                                          "-in", "signature", "-CAfile", chain.path("ca.pem"), "-out", "/dev/null"], in: unpacked)
        #expect(verified.status == 0, "openssl smime -verify: \(verified.output)")
        // The signing time is a signed attribute, as Wallet requires.
        let printed = try Self.tool("/usr/bin/openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", "signature"], in: unpacked)
        #expect(printed.output.contains("signingTime"), "\(printed.output.prefix(2000))")
        #expect(printed.output.contains("Proxima Test WWDR Stand-in"), "the WWDR certificate is carried")

        let pass = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: unpacked.appendingPathComponent("pass.json"))) as? [String: Any])
        let beacons = try #require(pass["beacons"] as? [[String: Any]])
        #expect(beacons.count == 2)
        #expect(beacons.first?["proximityUUID"] as? String == Self.uuid)
        #expect(beacons.map { $0["minor"] as? Int } == [10, 20])
        #expect(beacons.first?["relevantText"] as? String == "Welcome to Electronics")
        #expect(pass["serialNumber"] as? String == "V-0001")

        let inspected = try await ProximaBinary.run(["pass", "inspect", chain.path("visitor.pkpass"), "--ca", chain.path("ca.pem")])
        #expect(inspected.status == 0, "\(inspected.standardError)")
        #expect(inspected.standardOutput.contains("beacon \(Self.uuid):1:10"))
    }

    @Test func elevenBeaconsAreRefusedNamingTheEleventh() async throws {
        let chain = try TestPassCertificates.make()
        let lines = (1...11).map { "\(Self.uuid),1,\($0)" }.joined(separator: "\n")
        let created = try await Self.create(chain, beacons: lines, output: "eleven.pkpass")
        #expect(created.status != 0)
        #expect(created.standardError.contains("beacons[10]"), "\(created.standardError)")
        #expect(!FileManager.default.fileExists(atPath: chain.path("eleven.pkpass")))
    }

    @Test func aKeyThatIsNotTheCertificatesIsRefused() async throws {
        let chain = try TestPassCertificates.make()
        let created = try await Self.create(chain, beacons: "\(Self.uuid),1,10", output: "wrong.pkpass", key: "other.key")
        #expect(created.status != 0)
        #expect(created.standardError.contains("--key"), "\(created.standardError)")
    }

    @Test func inspectionNamesAFileChangedAfterSigning() async throws {
        let chain = try TestPassCertificates.make()
        try await #require(try Self.create(chain, beacons: "\(Self.uuid),1,10", output: "visitor.pkpass").status == 0)
        var package = try PassPackage.read(zip: Data(contentsOf: URL(fileURLWithPath: chain.path("visitor.pkpass"))))
        package.files["icon.png"]!.append(0)
        try package.zipped().write(to: URL(fileURLWithPath: chain.path("changed.pkpass")))
        let inspected = try await ProximaBinary.run(["pass", "inspect", chain.path("changed.pkpass")])
        #expect(inspected.status != 0)
        #expect(inspected.standardError.contains("icon.png"), "\(inspected.standardError)")
    }

    @Test func inspectionTakesASignatureOpenSSLMadeAndRefusesOneByAnotherChain() async throws {
        let chain = try TestPassCertificates.make()
        try await #require(try Self.create(chain, beacons: "\(Self.uuid),1,10", output: "visitor.pkpass").status == 0)
        var package = try PassPackage.read(zip: Data(contentsOf: URL(fileURLWithPath: chain.path("visitor.pkpass"))))
        try package.files["manifest.json"]!.write(to: URL(fileURLWithPath: chain.path("manifest.json")))
        try chain.openssl(["smime", "-sign", "-binary", "-in", "manifest.json", "-signer", "pass.pem", "-inkey", "pass.key",
                           "-certfile", "wwdr.pem", "-outform", "DER", "-out", "openssl.signature"])
        package.files["signature"] = try Data(contentsOf: URL(fileURLWithPath: chain.path("openssl.signature")))
        try package.zipped().write(to: URL(fileURLWithPath: chain.path("openssl.pkpass")))
        let accepted = try await ProximaBinary.run(["pass", "inspect", chain.path("openssl.pkpass"), "--ca", chain.path("ca.pem")])
        #expect(accepted.status == 0, "\(accepted.standardError)")

        // Signed by a certificate of its own, outside the WWDR chain.
        try chain.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "stranger.key", "-out", "stranger.pem", "-days", "2",
                           "-subj", "/CN=Pass Type ID: \(TestPassCertificates.passTypeIdentifier)"])
        try chain.openssl(["smime", "-sign", "-binary", "-in", "manifest.json", "-signer", "stranger.pem", "-inkey", "stranger.key",
                           "-outform", "DER", "-out", "stranger.signature"])
        package.files["signature"] = try Data(contentsOf: URL(fileURLWithPath: chain.path("stranger.signature")))
        try package.zipped().write(to: URL(fileURLWithPath: chain.path("stranger.pkpass")))
        let refused = try await ProximaBinary.run(["pass", "inspect", chain.path("stranger.pkpass"), "--ca", chain.path("ca.pem")])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("signature"), "\(refused.standardError)")
    }

    @Test func aPKCS12BundleSignsWithThePasswordFromAFile() async throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["pkcs12", "-export", "-in", "pass.pem", "-inkey", "pass.key", "-out", "pass.p12", "-passout", "pass:open sesame"])
        try "open sesame\n".write(toFile: chain.path("password"), atomically: true, encoding: .utf8)
        try "wrong\n".write(toFile: chain.path("wrong-password"), atomically: true, encoding: .utf8)
        let template = try chain.writeTemplate()
        try "\(Self.uuid),1,10".write(toFile: chain.path("beacons.csv"), atomically: true, encoding: .utf8)
        let arguments = ["pass", "create", "--template", template.path, "--beacons", chain.path("beacons.csv"),
                         "--cert", chain.path("pass.p12"), "--wwdr", chain.path("wwdr.pem"), "-o", chain.path("p12.pkpass")]
        let signed = try await ProximaBinary.run(arguments + ["--password-file", chain.path("password")])
        #expect(signed.status == 0, "\(signed.standardError)")
        let inspected = try await ProximaBinary.run(["pass", "inspect", chain.path("p12.pkpass"), "--ca", chain.path("ca.pem")])
        #expect(inspected.status == 0, "\(inspected.standardError)")
        let refused = try await ProximaBinary.run(arguments + ["--password-file", chain.path("wrong-password")])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("--cert: wrong password"), "\(refused.standardError)")
    }

    @Test func validateNamesTheField() async throws {
        let chain = try TestPassCertificates.make()
        let template = try chain.writeTemplate()
        let valid = try await ProximaBinary.run(["pass", "validate", template.appendingPathComponent("pass.json").path])
        #expect(valid.status == 0, "\(valid.standardError)")
        var pass = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: template.appendingPathComponent("pass.json"))) as? [String: Any])
        pass["backgroundColor"] = "#ff0000"
        try JSONSerialization.data(withJSONObject: pass).write(to: template.appendingPathComponent("bad.json"))
        let invalid = try await ProximaBinary.run(["pass", "validate", template.appendingPathComponent("bad.json").path])
        #expect(invalid.status != 0)
        #expect(invalid.standardError.contains("backgroundColor"), "\(invalid.standardError)")
    }
}
