import BeaconTesting
import Foundation
import Testing
@testable import BeaconWallet

/// Identities as operators hold them: PKCS#12 bundles and encrypted keys made by openssl.
@Suite("Pass identity files")
struct PassIdentityFileTests {
    static func text(_ chain: TestPassCertificates, _ name: String) throws -> String {
        try String(contentsOfFile: chain.path(name), encoding: .utf8)
    }

    /// The PassError a call refuses with; any other error fails the test.
    static func refusal(_ body: () throws -> Void) -> PassError? {
        do {
            try body()
            return nil
        } catch let error as PassError {
            return error
        } catch {
            Issue.record("not a PassError: \(error)")
            return nil
        }
    }

    @Test func aPKCS12BundleOpensWithItsPasswordOnly() throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["pkcs12", "-export", "-in", "pass.pem", "-inkey", "pass.key", "-certfile", "wwdr.pem",
                           "-out", "pass.p12", "-passout", "pass:correct horse"])
        let bundle = try Data(contentsOf: URL(fileURLWithPath: chain.path("pass.p12")))
        #expect(PassSigningIdentity.isPKCS12(bundle))
        let wwdr = try Self.text(chain, "wwdr.pem")
        let identity = try PassSigningIdentity(pkcs12: bundle, password: "correct horse", intermediatePEM: wwdr)
        #expect(identity.certificate.subject.description.contains(TestPassCertificates.passTypeIdentifier))
        // It signs: a pass made with it inspects against the root.
        let package = try PassPackage.build(files: PassPackage.readTemplate(at: chain.writeTemplate()), signedBy: identity)
        #expect(package.files["signature"] != nil)

        let wrong = Self.refusal { _ = try PassSigningIdentity(pkcs12: bundle, password: "battery staple", intermediatePEM: wwdr) }
        #expect(wrong?.field == "--cert")
        #expect(wrong?.reason.contains("wrong password") == true, "\(String(describing: wrong))")
    }

    @Test func aLegacyPKCS12IsRefusedByItsCipher() throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["pkcs12", "-export", "-in", "pass.pem", "-inkey", "pass.key", "-out", "legacy.p12", "-passout", "pass:secret",
                           "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1"])
        let bundle = try Data(contentsOf: URL(fileURLWithPath: chain.path("legacy.p12")))
        let wwdr = try Self.text(chain, "wwdr.pem")
        let refused = Self.refusal { _ = try PassSigningIdentity(pkcs12: bundle, password: "secret", intermediatePEM: wwdr) }
        #expect(refused?.field == "--cert")
        #expect(refused?.reason.contains("TripleDES") == true, "\(String(describing: refused))")
    }

    @Test func anEncryptedKeyNeedsItsPassword() throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["pkcs8", "-topk8", "-v2", "aes256", "-in", "pass.key", "-out", "encrypted.key", "-passout", "pass:s3cret"])
        let (certificate, key, wwdr) = (try Self.text(chain, "pass.pem"), try Self.text(chain, "encrypted.key"), try Self.text(chain, "wwdr.pem"))
        let identity = try PassSigningIdentity(certificatePEM: certificate, privateKeyPEM: key, intermediatePEM: wwdr, password: "s3cret")
        #expect(identity.privateKey.publicKey == identity.certificate.publicKey)
        let missing = Self.refusal { _ = try PassSigningIdentity(certificatePEM: certificate, privateKeyPEM: key, intermediatePEM: wwdr) }
        #expect(missing?.field == "--key")
        let wrong = Self.refusal { _ = try PassSigningIdentity(certificatePEM: certificate, privateKeyPEM: key, intermediatePEM: wwdr, password: "guess") }
        #expect(wrong?.field == "--key")
        #expect(wrong?.reason.contains("wrong password") == true, "\(String(describing: wrong))")
    }

    @Test func damagedBundlesAreRefusedWithoutTrapping() throws {
        let chain = try TestPassCertificates.make()
        try chain.openssl(["pkcs12", "-export", "-in", "pass.pem", "-inkey", "pass.key", "-out", "pass.p12", "-passout", "pass:x"])
        let bundle = Array(try Data(contentsOf: URL(fileURLWithPath: chain.path("pass.p12"))))
        let wwdr = try Self.text(chain, "wwdr.pem")
        // Every truncation, and a byte flipped at many offsets: each is an error, never a crash.
        for length in stride(from: 0, to: bundle.count, by: 7) {
            #expect(Self.refusal { _ = try PassSigningIdentity(pkcs12: Data(bundle.prefix(length)), password: "x", intermediatePEM: wwdr) } != nil)
        }
        for offset in stride(from: 0, to: bundle.count, by: 13) {
            var damaged = bundle
            damaged[offset] ^= 0x5A
            _ = Self.refusal { _ = try PassSigningIdentity(pkcs12: Data(damaged), password: "x", intermediatePEM: wwdr) }
        }
    }
}
