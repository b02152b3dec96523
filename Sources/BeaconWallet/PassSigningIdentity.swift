import Foundation
import SwiftASN1
import X509

/// What signs a pass: the pass type certificate Apple issues to a developer, its private key,
/// and Apple's WWDR intermediate, which the signature carries so Wallet can build the chain.
public struct PassSigningIdentity: Sendable {
    public var certificate: Certificate
    public var privateKey: Certificate.PrivateKey
    public var intermediate: Certificate

    /// From PEM files. The key may be encrypted (openssl's "ENCRYPTED PRIVATE KEY", PBES2 with
    /// AES), then `password` decrypts it.
    public init(certificatePEM: String, privateKeyPEM: String, intermediatePEM: String, password: String? = nil,
                now: Date = Date()) throws(PassError) {
        let key: Certificate.PrivateKey
        if privateKeyPEM.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            guard let password else { throw PassError("--key", "an encrypted key; give its password with --password-file") }
            key = try Self.decryptedKey(privateKeyPEM, password: password)
        } else if privateKeyPEM.contains("Proc-Type: 4,ENCRYPTED") {
            throw PassError("--key", "a key in openssl's old encrypted PEM form; convert it: openssl pkcs8 -topk8 -v2 aes256 -in KEY -out key.pem")
        } else {
            do {
                key = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
            } catch {
                throw PassError("--key", "not a PEM private key (RSA, EC or PKCS#8): \(error)")
            }
        }
        try self.init(certificate: try Self.certificate(certificatePEM, field: "--cert"), privateKey: key,
                      intermediate: try Self.certificate(intermediatePEM, field: "--wwdr"), now: now)
    }

    /// From a PKCS#12 bundle holding the pass type certificate and its key (as Keychain Access
    /// exports it), with the WWDR intermediate as PEM. A wrong password is named as such.
    public init(pkcs12: Data, password: String, intermediatePEM: String, now: Date = Date()) throws(PassError) {
        let bundle = try PKCS12Bundle(Array(pkcs12), password: password, field: "--cert")
        guard let key = bundle.privateKeys.first else { throw PassError("--cert", "the PKCS#12 file holds no private key") }
        guard let certificate = bundle.certificates.first(where: { $0.publicKey == key.publicKey }) else {
            throw PassError("--cert", "the PKCS#12 file holds no certificate for its key (\(bundle.certificates.count) certificates)")
        }
        try self.init(certificate: certificate, privateKey: key, intermediate: try Self.certificate(intermediatePEM, field: "--wwdr"), now: now)
    }

    /// Refuses an expired or not yet valid certificate, a key that is not the certificate's, and
    /// an intermediate that did not issue it.
    public init(certificate: Certificate, privateKey: Certificate.PrivateKey, intermediate: Certificate, now: Date = Date()) throws(PassError) {
        guard privateKey.publicKey == certificate.publicKey else {
            throw PassError("--key", "does not belong to the certificate given with --cert")
        }
        for (field, checked) in [("--cert", certificate), ("--wwdr", intermediate)] {
            if now > checked.notValidAfter { throw PassError(field, "expired on \(ISO8601DateFormatter().string(from: checked.notValidAfter))") }
            if now < checked.notValidBefore { throw PassError(field, "not valid before \(ISO8601DateFormatter().string(from: checked.notValidBefore))") }
        }
        // The name alone would take any CA that copied the WWDR subject; the signature shows who issued it.
        guard certificate.issuer == intermediate.subject,
              intermediate.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw PassError("--wwdr", "did not issue the certificate given with --cert (its issuer is \(certificate.issuer))")
        }
        self.certificate = certificate
        self.privateKey = privateKey
        self.intermediate = intermediate
    }

    /// Whether a file's bytes look like PKCS#12 rather than PEM: DER starts with a SEQUENCE.
    public static func isPKCS12(_ data: Data) -> Bool {
        data.first == 0x30 && !data.prefix(64).contains(UInt8(ascii: "-"))
    }

    static func decryptedKey(_ pem: String, password: String) throws(PassError) -> Certificate.PrivateKey {
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: pem)
        } catch {
            throw PassError("--key", "not a PEM document: \(error)")
        }
        do {
            let parts = try ASN1Walk.children(try DER.parse(document.derBytes), "--key", atLeast: 2)
            let keyInfo = try PasswordBasedEncryption.decrypt(Array(try ASN1OctetString(derEncoded: parts[1]).bytes),
                                                              algorithm: parts[0], password: password, field: "--key")
            // One wrong password in 256 still unpads cleanly; the key then does not parse.
            do {
                return try PKCS12Bundle.privateKey(pkcs8: keyInfo, field: "--key")
            } catch {
                throw PassError("--key", "cannot be decrypted: wrong password (or a damaged key)")
            }
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError("--key", "an unreadable encrypted key: \(error)")
        }
    }

    static func certificate(_ pem: String, field: String) throws(PassError) -> Certificate {
        if pem.isEmpty || (!pem.contains("-----BEGIN") && pem.utf8.first == 0x30) {
            throw PassError(field, "not PEM (a PKCS#12 bundle is read by --cert alone, with --password-file)")
        }
        do {
            return try Certificate(pemEncoded: pem)
        } catch {
            throw PassError(field, "not a PEM certificate: \(error)")
        }
    }
}
