import Crypto
import Foundation
import SwiftASN1
@_spi(CMS) @_spi(FixedExpiryValidationTime) import X509

/// The pass's `signature` file: a detached CMS signature of manifest.json by the pass type
/// certificate, carrying Apple's WWDR intermediate and the signing time, as Wallet requires.
public enum PassSignature {
    public static func sign(manifest: Data, with identity: PassSigningIdentity, at time: Date = Date()) throws(PassError) -> Data {
        do {
            return Data(try CMS.sign(Array(manifest), additionalIntermediateCertificates: [identity.intermediate],
                                     certificate: identity.certificate, privateKey: identity.privateKey,
                                     signingTime: time, detached: true))
        } catch {
            throw PassError("signature", "signing failed: \(error)")
        }
    }

    /// What a valid signature establishes.
    public struct Verified: Sendable {
        public var signer: Certificate
        public var signingTime: Date?
    }

    /// Verifies a detached signature of `manifest` and the signer's chain: to `trustRoots` when
    /// given (with the signature's certificates as intermediates), else to a certificate the
    /// signature itself carries (the WWDR intermediate), which shows the chain is complete but
    /// not who is at its top. Throws naming the first thing that does not hold.
    public static func verify(manifest: Data, signature: Data, trustRoots: [Certificate]? = nil,
                              at time: Date = Date()) async throws(PassError) -> Verified {
        let reader = try CMSSignatureReader(Array(signature))
        if reader.hasEmbeddedContent { throw PassError("signature", "carries its content; a pass signature is detached") }
        let signer = reader.signer
        let algorithm = try signatureAlgorithm(signature: signer.signatureAlgorithm, digest: signer.digestAlgorithm)
        let digest = try self.digest(manifest, algorithm: signer.digestAlgorithm)
        let signedBytes: [UInt8]
        if let attributes = signer.signedAttributesDER {
            guard let messageDigest = signer.messageDigest else { throw PassError("signature", "signed attributes without a message digest") }
            guard messageDigest == digest else { throw PassError(PassManifest.fileName, "changed after signing: its digest is not the one signed") }
            signedBytes = attributes
        } else {
            signedBytes = Array(manifest)
        }
        guard let certificate = reader.certificates.first(where: {
            $0.publicKey.isValidSignature(signer.signature, for: signedBytes, signatureAlgorithm: algorithm)
        }) else {
            throw PassError("signature", "not made by any certificate it carries (\(reader.certificates.count) certificates; a signature by another key or a changed manifest)")
        }
        let others = reader.certificates.filter { $0 != certificate }
        let roots = trustRoots ?? others
        guard !roots.isEmpty else { throw PassError("signature", "carries no intermediate certificate (Apple's WWDR is required)") }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(fixedExpiryValidationTime: time) }
        let result = await verifier.validate(leaf: certificate, intermediates: CertificateStore(reader.certificates))
        guard case .validCertificate = result else {
            let target = trustRoots == nil ? "the intermediate it carries" : "the given CA"
            throw PassError("signature", "the signer \(certificate.subject) does not chain to \(target): \(result)")
        }
        return Verified(signer: certificate, signingTime: signer.signingTime)
    }

    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let sha384: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 2]
    static let sha512: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 3]
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]

    static func digest(_ data: Data, algorithm: ASN1ObjectIdentifier) throws(PassError) -> [UInt8] {
        switch algorithm {
        case sha1: Array(Insecure.SHA1.hash(data: data))
        case sha256: Array(SHA256.hash(data: data))
        case sha384: Array(SHA384.hash(data: data))
        case sha512: Array(SHA512.hash(data: data))
        default: throw PassError("signature", "unsupported digest algorithm \(algorithm)")
        }
    }

    /// RFC 5652 lets a signer name rsaEncryption and give the digest apart (openssl, signpass);
    /// the combined identifiers are taken as they are.
    static func signatureAlgorithm(signature: ASN1ObjectIdentifier, digest: ASN1ObjectIdentifier) throws(PassError) -> Certificate.SignatureAlgorithm {
        if signature == rsaEncryption {
            switch digest {
            case sha1: return .sha1WithRSAEncryption
            case sha256: return .sha256WithRSAEncryption
            case sha384: return .sha384WithRSAEncryption
            case sha512: return .sha512WithRSAEncryption
            default: throw PassError("signature", "unsupported digest algorithm \(digest)")
            }
        }
        let named: [(ASN1ObjectIdentifier, Certificate.SignatureAlgorithm)] = [
            ([1, 2, 840, 113_549, 1, 1, 5], .sha1WithRSAEncryption), ([1, 2, 840, 113_549, 1, 1, 11], .sha256WithRSAEncryption),
            ([1, 2, 840, 113_549, 1, 1, 12], .sha384WithRSAEncryption), ([1, 2, 840, 113_549, 1, 1, 13], .sha512WithRSAEncryption),
            ([1, 2, 840, 10_045, 4, 3, 2], .ecdsaWithSHA256), ([1, 2, 840, 10_045, 4, 3, 3], .ecdsaWithSHA384),
            ([1, 2, 840, 10_045, 4, 3, 4], .ecdsaWithSHA512),
        ]
        guard let match = named.first(where: { $0.0 == signature }) else {
            throw PassError("signature", "unsupported signature algorithm \(signature)")
        }
        return match.1
    }
}
