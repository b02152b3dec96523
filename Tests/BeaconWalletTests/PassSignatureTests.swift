import BeaconTesting
import Foundation
import Testing
@_spi(CMS) import X509
@testable import BeaconWallet

@Suite("Pass signing and inspection")
struct PassSignatureTests {
    static func identity(_ chain: TestPassCertificates, key: String = "pass.key") throws -> PassSigningIdentity {
        try PassSigningIdentity(certificatePEM: String(contentsOfFile: chain.path("pass.pem"), encoding: .utf8),
                                privateKeyPEM: String(contentsOfFile: chain.path(key), encoding: .utf8),
                                intermediatePEM: String(contentsOfFile: chain.path("wwdr.pem"), encoding: .utf8))
    }

    static func package(_ chain: TestPassCertificates) throws -> PassPackage {
        let template = try PassPackage.readTemplate(at: chain.writeTemplate())
        return try PassPackage.build(files: template, signedBy: identity(chain))
    }

    static func root(_ chain: TestPassCertificates) throws -> [Certificate] {
        [try Certificate(pemEncoded: String(contentsOfFile: chain.path("ca.pem"), encoding: .utf8))]
    }

    @Test func aPassRoundTripsThroughItsZipAndInspects() async throws {
        let chain = try TestPassCertificates.make()
        let package = try Self.package(chain)
        let read = try PassPackage.read(zip: package.zipped())
        #expect(read.files == package.files)
        let report = try await PassInspection.inspect(read, trustRoots: Self.root(chain))
        #expect(report.passTypeIdentifier == TestPassCertificates.passTypeIdentifier)
        #expect(report.files.contains("en.lproj/pass.strings"))
        #expect(report.signingTime != nil)
    }

    @Test func aSignatureByAnotherKeyIsRefused() async throws {
        let chain = try TestPassCertificates.make()
        var package = try Self.package(chain)
        // The signer info names the pass type certificate, but another key made the signature.
        let certificate = try Certificate(pemEncoded: String(contentsOfFile: chain.path("pass.pem"), encoding: .utf8))
        let otherKey = try Certificate.PrivateKey(pemEncoded: String(contentsOfFile: chain.path("other.key"), encoding: .utf8))
        let wwdr = try Certificate(pemEncoded: String(contentsOfFile: chain.path("wwdr.pem"), encoding: .utf8))
        package.files["signature"] = Data(try CMS.sign(Array(package.files["manifest.json"]!), additionalIntermediateCertificates: [wwdr],
                                                       certificate: certificate, privateKey: otherKey, signingTime: Date(), detached: true))
        do {
            _ = try await PassInspection.inspect(package, trustRoots: Self.root(chain))
            Issue.record("a signature by another key was accepted")
        } catch let error as PassError {
            #expect(error.field == "signature")
        }
    }

    @Test func aChangedManifestIsNamed() async throws {
        let chain = try TestPassCertificates.make()
        var package = try Self.package(chain)
        var manifest = try #require(try JSONSerialization.jsonObject(with: package.files["manifest.json"]!) as? [String: String])
        manifest["extra.png"] = String(repeating: "0", count: 40)
        package.files["extra.png"] = Data()
        package.files["manifest.json"] = try JSONSerialization.data(withJSONObject: manifest)
        do {
            _ = try await PassInspection.inspect(package, trustRoots: Self.root(chain))
            Issue.record("a changed manifest was accepted")
        } catch let error as PassError {
            #expect(error.field.contains("extra.png") || error.field == "manifest.json", "\(error)")
        }
    }

    @Test func aRootThatDidNotIssueTheChainIsRefused() async throws {
        let chain = try TestPassCertificates.make()
        let other = try TestPassCertificates.make()
        do {
            _ = try await PassInspection.inspect(try Self.package(chain), trustRoots: Self.root(other))
            Issue.record("a foreign root was accepted")
        } catch let error as PassError {
            #expect(error.field == "signature")
            #expect(error.reason.contains("does not chain"))
        }
    }

    @Test func theIdentityRefusesAMismatchedKeyAndAStrangeIssuer() throws {
        let chain = try TestPassCertificates.make()
        #expect(throws: PassError("--key", "does not belong to the certificate given with --cert")) { try Self.identity(chain, key: "other.key") }
        do {
            _ = try PassSigningIdentity(certificatePEM: String(contentsOfFile: chain.path("pass.pem"), encoding: .utf8),
                                        privateKeyPEM: String(contentsOfFile: chain.path("pass.key"), encoding: .utf8),
                                        intermediatePEM: String(contentsOfFile: chain.path("ca.pem"), encoding: .utf8))
            Issue.record("accepted a WWDR that did not issue the certificate")
        } catch let error as PassError {
            #expect(error.field == "--wwdr")
        }
        do {
            _ = try PassSigningIdentity(certificatePEM: String(contentsOfFile: chain.path("pass.pem"), encoding: .utf8),
                                        privateKeyPEM: String(contentsOfFile: chain.path("pass.key"), encoding: .utf8),
                                        intermediatePEM: String(contentsOfFile: chain.path("wwdr.pem"), encoding: .utf8),
                                        now: Date().addingTimeInterval(10 * 86_400))
            Issue.record("accepted an expired certificate")
        } catch let error as PassError {
            #expect(error.field == "--cert")
            #expect(error.reason.contains("expired"))
        }
    }

    @Test func aWWDRImpostorWithTheSameNameIsRefused() throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "impostor.key", "-out", "impostor.pem", "-days", "2",
                           "-subj", "/CN=Proxima Test WWDR Stand-in/OU=G4/O=Proxima Tests"])
        do {
            _ = try PassSigningIdentity(certificatePEM: String(contentsOfFile: chain.path("pass.pem"), encoding: .utf8),
                                        privateKeyPEM: String(contentsOfFile: chain.path("pass.key"), encoding: .utf8),
                                        intermediatePEM: String(contentsOfFile: chain.path("impostor.pem"), encoding: .utf8))
            Issue.record("accepted a WWDR that only has the issuer's name")
        } catch let error as PassError {
            #expect(error.field == "--wwdr")
        }
    }

    @Test func zipBombsAndEscapingPathsAreRefused() throws {
        let escaping = PassPackage(files: ["../evil": Data([1])])
        do { _ = try PassPackage.read(zip: escaping.zipped()); Issue.record("accepted ../evil") } catch {
            #expect(error.field == "../evil")
        }
        let large = PassPackage(files: ["big.bin": Data(count: PassPackage.maximumBytes + 1)])
        do { _ = try PassPackage.read(zip: large.zipped()); Issue.record("accepted more than the limit unpacked") } catch {
            #expect(error.field == "big.bin")
        }
        do { _ = try PassPackage.read(zip: Data("not a zip".utf8)); Issue.record("accepted a non-zip") } catch {
            #expect(error.field == "package")
        }
    }

    @Test func beaconFilesNameTheLineOrPath() throws {
        let csv = "uuid,major,minor\nF7826DA6-4FA2-4E98-8024-BC5B71E0893E,1,2,Hello, world\n"
        let parsed = try PassBeacon.parse(Data(csv.utf8))
        #expect(parsed == [PassBeacon(proximityUUID: UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!, major: 1, minor: 2, relevantText: "Hello, world")])
        #expect(throws: PassError("line 3 major", "must be an integer from 0 to 65535, found \"70000\"")) {
            try PassBeacon.parse(Data((csv + "F7826DA6-4FA2-4E98-8024-BC5B71E0893E,70000,1\n").utf8))
        }
        do { _ = try PassBeacon.parse(Data(#"[{"proximityUUID":"F7826DA6-4FA2-4E98-8024-BC5B71E0893E","major":true}]"#.utf8)); Issue.record("accepted major true") } catch {
            #expect(error.field == "beacons[0].major")
        }
    }
}
