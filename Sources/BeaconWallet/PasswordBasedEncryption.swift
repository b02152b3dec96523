import Crypto
import _CryptoExtras
import Foundation
import SwiftASN1

/// PKCS#5 PBES2 (RFC 8018 § 6.2) with PBKDF2 and AES-CBC: how openssl 3 encrypts a PKCS#8 key
/// ("ENCRYPTED PRIVATE KEY") and the bags of a PKCS#12 file by default. The legacy PKCS#12
/// schemes (RC2, triple DES) need ciphers swift-crypto does not have, so they are refused by name.
enum PasswordBasedEncryption {
    static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 13]
    static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 12]
    static let legacy: [ASN1ObjectIdentifier: String] = [
        [1, 2, 840, 113_549, 1, 12, 1, 3]: "pbeWithSHAAnd3-KeyTripleDES-CBC",
        [1, 2, 840, 113_549, 1, 12, 1, 6]: "pbeWithSHAAnd40BitRC2-CBC",
        [1, 2, 840, 113_549, 1, 12, 1, 5]: "pbeWithSHAAnd128BitRC2-CBC",
    ]
    static let pseudoRandomFunctions: [ASN1ObjectIdentifier: KDF.Insecure.PBKDF2.HashFunction] = [
        [1, 2, 840, 113_549, 2, 7]: .insecureSHA1, [1, 2, 840, 113_549, 2, 9]: .sha256,
        [1, 2, 840, 113_549, 2, 10]: .sha384, [1, 2, 840, 113_549, 2, 11]: .sha512,
    ]
    static let ciphers: [ASN1ObjectIdentifier: Int] = [
        [2, 16, 840, 1, 101, 3, 4, 1, 2]: 16, [2, 16, 840, 1, 101, 3, 4, 1, 22]: 24, [2, 16, 840, 1, 101, 3, 4, 1, 42]: 32,
    ]
    /// Iterations beyond this are refused: the count comes from the file, and each costs a hash.
    static let maximumIterations = 1_000_000

    /// Decrypts `ciphertext` under the AlgorithmIdentifier `algorithm`. A wrong password shows
    /// as bad padding; the caller says which field it was reading.
    static func decrypt(_ ciphertext: [UInt8], algorithm: ASN1Node, password: String, field: String) throws(PassError) -> [UInt8] {
        do {
            let parts = try ASN1Walk.children(algorithm, field)
            let scheme = try ASN1ObjectIdentifier(berEncoded: parts[0])
            if let name = legacy[scheme] {
                throw PassError(field, "encrypted with the legacy \(name); re-export it with AES: openssl pkcs12 -in OLD.p12 -nodes -legacy | openssl pkcs12 -export -out NEW.p12")
            }
            guard scheme == pbes2, parts.count == 2 else { throw PassError(field, "encrypted with \(scheme); only PBES2 (PBKDF2 with AES-CBC) is read") }
            let parameters = try ASN1Walk.children(parts[1], field, atLeast: 2)
            let derivation = try ASN1Walk.children(parameters[0], field, atLeast: 2)
            guard try ASN1ObjectIdentifier(berEncoded: derivation[0]) == pbkdf2 else { throw PassError(field, "PBES2 without PBKDF2 is not read") }
            let kdf = try ASN1Walk.children(derivation[1], field, atLeast: 2)
            let salt = try ASN1OctetString(berEncoded: kdf[0]).bytes
            let iterations = try Int(berEncoded: kdf[1])
            guard (1...maximumIterations).contains(iterations) else { throw PassError(field, "\(iterations) PBKDF2 iterations; 1 to \(maximumIterations) are read") }
            var hash = KDF.Insecure.PBKDF2.HashFunction.insecureSHA1
            for node in kdf.dropFirst(2) where node.identifier == .sequence {
                let prf = try ASN1ObjectIdentifier(berEncoded: ASN1Walk.children(node, field)[0])
                guard let known = pseudoRandomFunctions[prf] else { throw PassError(field, "PBKDF2 with \(prf) is not read") }
                hash = known
            }
            let encryption = try ASN1Walk.children(parameters[1], field, atLeast: 2)
            let cipher = try ASN1ObjectIdentifier(berEncoded: encryption[0])
            guard let keyLength = ciphers[cipher] else { throw PassError(field, "encrypted with \(cipher); AES-CBC is read") }
            let iv = try ASN1OctetString(berEncoded: encryption[1]).bytes
            let key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: hash,
                                                         outputByteCount: keyLength, unsafeUncheckedRounds: iterations)
            do {
                return Array(try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv)))
            } catch {
                throw PassError(field, "cannot be decrypted: wrong password")
            }
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError(field, "unreadable encryption parameters: \(error)")
        }
    }
}

/// Walking BER without a schema, for the parts of PKCS#12 and CMS read here.
enum ASN1Walk {
    /// The parts of a constructed value, at least `minimum` of them, so that indexing below
    /// that cannot trap on a malformed file.
    static func children(_ node: ASN1Node, _ field: String, atLeast minimum: Int = 1) throws(PassError) -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw PassError(field, "expected a constructed value at a \(node.identifier)") }
        let list = Array(nodes)
        guard list.count >= minimum else { throw PassError(field, "\(list.count) parts in a \(node.identifier), \(minimum) at least expected") }
        return list
    }

    /// The bytes of an OCTET STRING, or of an IMPLICIT one under another tag, primitive or
    /// (as BER allows) constructed of segments.
    static func octets(_ node: ASN1Node, _ field: String) throws(PassError) -> [UInt8] {
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let nodes):
            var joined: [UInt8] = []
            for segment in nodes { joined += try octets(segment, field) }
            return joined
        }
    }

    /// The value inside an `[n] EXPLICIT` wrapper.
    static func explicit(_ node: ASN1Node, _ field: String) throws(PassError) -> ASN1Node {
        guard node.identifier.tagClass == .contextSpecific else { throw PassError(field, "expected a tagged value at a \(node.identifier)") }
        return try children(node, field)[0]
    }
}
