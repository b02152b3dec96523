import Foundation
import X509

/// What signs a pass: the pass type certificate Apple issues to a developer, its private key,
/// and Apple's WWDR intermediate, which the signature carries so Wallet can build the chain.
public struct PassSigningIdentity: Sendable {
    public var certificate: Certificate
    public var privateKey: Certificate.PrivateKey
    public var intermediate: Certificate

    /// Loads PEM files, refusing an expired or not yet valid certificate and a key that is not
    /// the certificate's. PKCS#12 bundles and encrypted keys are refused with the openssl command
    /// that converts them: the packages this project may use read neither.
    public init(certificatePEM: String, privateKeyPEM: String, intermediatePEM: String, now: Date = Date()) throws(PassError) {
        certificate = try Self.certificate(certificatePEM, field: "--cert")
        intermediate = try Self.certificate(intermediatePEM, field: "--wwdr")
        if privateKeyPEM.contains("ENCRYPTED") {
            throw PassError("--key", "an encrypted key; decrypt it first: openssl pkey -in KEY -out key.pem (the password is asked once)")
        }
        do {
            privateKey = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        } catch {
            throw PassError("--key", "not a PEM private key (RSA, EC or PKCS#8): \(error)")
        }
        guard privateKey.publicKey == certificate.publicKey else {
            throw PassError("--key", "does not belong to the certificate given with --cert")
        }
        for (field, checked) in [("--cert", certificate), ("--wwdr", intermediate)] {
            if now > checked.notValidAfter { throw PassError(field, "expired on \(ISO8601DateFormatter().string(from: checked.notValidAfter))") }
            if now < checked.notValidBefore { throw PassError(field, "not valid before \(ISO8601DateFormatter().string(from: checked.notValidBefore))") }
        }
        guard certificate.issuer == intermediate.subject else {
            throw PassError("--wwdr", "did not issue the certificate given with --cert (its issuer is \(certificate.issuer))")
        }
    }

    static func certificate(_ pem: String, field: String) throws(PassError) -> Certificate {
        if pem.isEmpty || (!pem.contains("-----BEGIN") && pem.utf8.first == 0x30) {
            throw PassError(field, "not PEM; a .p12 bundle converts with: openssl pkcs12 -in pass.p12 -clcerts -nokeys -out cert.pem (and -nocerts -nodes for the key)")
        }
        do {
            return try Certificate(pemEncoded: pem)
        } catch {
            throw PassError(field, "not a PEM certificate: \(error)")
        }
    }
}
