import Foundation
import SwiftASN1
import X509

/// Reads a detached CMS SignedData (RFC 5652 § 5) far enough to verify a pass's signature:
/// its certificates and its one signer's digest, signed attributes and signature.
///
/// swift-certificates verifies CMS itself, but only when the signer names a signature
/// algorithm with its digest (sha256WithRSAEncryption); openssl and Apple's signpass write the
/// bare rsaEncryption with the digest beside it, as RFC 5652 allows. So the structure is read
/// here with SwiftASN1 and the signature checked through `Certificate.PublicKey`.
struct CMSSignatureReader {
    struct Signer {
        var issuerAndSerial: (issuer: ArraySlice<UInt8>, serial: ArraySlice<UInt8>)?
        var digestAlgorithm: ASN1ObjectIdentifier
        var signatureAlgorithm: ASN1ObjectIdentifier
        /// The DER of the signed attributes as a SET (the bytes the signature covers), if any.
        var signedAttributesDER: [UInt8]?
        var messageDigest: [UInt8]?
        var signingTime: Date?
        var signature: [UInt8]
    }

    var certificates: [Certificate]
    var signer: Signer
    var hasEmbeddedContent: Bool

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 4]
    static let signingTimeOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 5]

    init(_ bytes: [UInt8]) throws(PassError) {
        do {
            let contentInfo = try Self.children(of: BER.parse(bytes), "ContentInfo")
            guard contentInfo.count == 2, try ASN1ObjectIdentifier(berEncoded: contentInfo[0]) == Self.signedDataOID else {
                throw PassError("signature", "not a CMS SignedData")
            }
            let wrapped = try Self.children(of: contentInfo[1], "content")
            guard let signedDataNode = wrapped.first else { throw PassError("signature", "empty SignedData") }
            let signedData = try Self.children(of: signedDataNode, "SignedData")
            guard signedData.count >= 4 else { throw PassError("signature", "SignedData has \(signedData.count) parts, 4 at least expected") }
            // version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos
            let encapsulated = try Self.children(of: signedData[2], "encapContentInfo")
            hasEmbeddedContent = encapsulated.count > 1
            certificates = []
            for node in signedData[3...].dropLast() where node.identifier.tagClass == .contextSpecific && node.identifier.tagNumber == 0 {
                for certificateNode in try Self.children(of: node, "certificates") {
                    certificates.append(try Certificate(derEncoded: Array(certificateNode.encodedBytes)))
                }
            }
            let signerInfos = try Self.children(of: signedData[signedData.count - 1], "signerInfos")
            guard signerInfos.count == 1 else { throw PassError("signature", "\(signerInfos.count) signers; a pass has exactly one") }
            signer = try Self.signer(Self.children(of: signerInfos[0], "SignerInfo"))
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError("signature", "not a readable CMS signature: \(error)")
        }
    }

    private static func signer(_ parts: [ASN1Node]) throws -> Signer {
        guard parts.count >= 5 else { throw PassError("signature", "SignerInfo has \(parts.count) parts, 5 at least expected") }
        var position = 1
        var issuerAndSerial: (ArraySlice<UInt8>, ArraySlice<UInt8>)?
        if parts[position].identifier == .sequence {
            let sid = try children(of: parts[position], "sid")
            if sid.count == 2 { issuerAndSerial = (sid[0].encodedBytes, sid[1].encodedBytes) }
        }
        position += 1
        let digestAlgorithm = try ASN1ObjectIdentifier(berEncoded: children(of: parts[position], "digestAlgorithm")[0])
        position += 1
        var signedAttributesDER: [UInt8]?
        var messageDigest: [UInt8]?
        var signingTime: Date?
        if parts[position].identifier.tagClass == .contextSpecific && parts[position].identifier.tagNumber == 0 {
            // The signature covers the attributes encoded as a SET, not with their [0] tag.
            var der = Array(parts[position].encodedBytes)
            der[0] = 0x31
            signedAttributesDER = der
            for attribute in try children(of: parts[position], "signedAttrs") {
                let fields = try children(of: attribute, "Attribute")
                guard fields.count == 2 else { continue }
                let type = try ASN1ObjectIdentifier(berEncoded: fields[0])
                guard let value = try children(of: fields[1], "attrValues").first else { continue }
                if type == messageDigestOID {
                    messageDigest = Array(try ASN1OctetString(berEncoded: value).bytes)
                } else if type == signingTimeOID {
                    signingTime = try? Date(UTCTime(berEncoded: value))
                }
            }
            position += 1
        }
        let signatureAlgorithm = try ASN1ObjectIdentifier(berEncoded: children(of: parts[position], "signatureAlgorithm")[0])
        position += 1
        guard position < parts.count else { throw PassError("signature", "SignerInfo has no signature") }
        let signature = Array(try ASN1OctetString(berEncoded: parts[position]).bytes)
        return Signer(issuerAndSerial: issuerAndSerial, digestAlgorithm: digestAlgorithm, signatureAlgorithm: signatureAlgorithm,
                      signedAttributesDER: signedAttributesDER, messageDigest: messageDigest, signingTime: signingTime, signature: signature)
    }

    static func children(of node: ASN1Node, _ what: String) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw PassError("signature", "\(what) is not a constructed value") }
        return Array(nodes)
    }
}

extension Date {
    init(_ time: UTCTime) {
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (time.year, time.month, time.day)
        (components.hour, components.minute, components.second) = (time.hours, time.minutes, time.seconds)
        self = components.date ?? Date(timeIntervalSince1970: 0)
    }
}
