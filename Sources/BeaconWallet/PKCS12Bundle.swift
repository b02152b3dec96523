import Crypto
import Foundation
import SwiftASN1
import X509

/// The certificates and private keys of a PKCS#12 (.p12) file (RFC 7292), as Keychain Access
/// and openssl export a pass type identity. The integrity MAC is checked first, so a wrong
/// password is named as such rather than as a decoding failure.
struct PKCS12Bundle {
    var certificates: [Certificate] = []
    var privateKeys: [Certificate.PrivateKey] = []

    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 6]
    static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 1]
    static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
    static let certificateBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
    static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 22, 1]
    static let maximumBags = 64

    init(_ bytes: [UInt8], password: String, field: String) throws(PassError) {
        let pfx: [ASN1Node]
        do {
            pfx = try ASN1Walk.children(try BER.parse(bytes), field, atLeast: 2)
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError(field, "not a PKCS#12 file: \(error)")
        }
        let authenticatedSafe = try Self.dataContent(pfx[1], field: field)
        if pfx.count > 2 { try PKCS12MAC.check(pfx[2], content: authenticatedSafe, password: password, field: field) }
        do {
            for contentInfo in try ASN1Walk.children(try BER.parse(authenticatedSafe), field) {
                let parts = try ASN1Walk.children(contentInfo, field, atLeast: 2)
                let type = try ASN1ObjectIdentifier(berEncoded: parts[0])
                let safeContents: [UInt8]
                if type == Self.data {
                    safeContents = try Self.dataContent(contentInfo, field: field)
                } else if type == Self.encryptedData {
                    let encrypted = try ASN1Walk.children(try ASN1Walk.explicit(parts[1], field), field, atLeast: 2)
                    let info = try ASN1Walk.children(encrypted[1], field, atLeast: 3)
                    safeContents = try PasswordBasedEncryption.decrypt(try ASN1Walk.octets(info[2], field), algorithm: info[1],
                                                                       password: password, field: field)
                } else {
                    throw PassError(field, "a content of type \(type) (public-key encrypted PKCS#12 is not read)")
                }
                try readBags(try BER.parse(safeContents), password: password, field: field)
            }
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError(field, "a malformed PKCS#12 content: \(error)")
        }
    }

    /// The OCTET STRING inside a ContentInfo of type data.
    static func dataContent(_ contentInfo: ASN1Node, field: String) throws(PassError) -> [UInt8] {
        let parts = try ASN1Walk.children(contentInfo, field, atLeast: 2)
        do {
            guard try ASN1ObjectIdentifier(berEncoded: parts[0]) == data else { throw PassError(field, "expected data content") }
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError(field, "unreadable content type: \(error)")
        }
        return try ASN1Walk.octets(try ASN1Walk.explicit(parts[1], field), field)
    }

    mutating func readBags(_ safeContents: ASN1Node, password: String, field: String) throws {
        for bag in try ASN1Walk.children(safeContents, field) {
            guard certificates.count + privateKeys.count < Self.maximumBags else { throw PassError(field, "more than \(Self.maximumBags) bags") }
            let parts = try ASN1Walk.children(bag, field, atLeast: 2)
            let type = try ASN1ObjectIdentifier(berEncoded: parts[0])
            let value = try ASN1Walk.explicit(parts[1], field)
            switch type {
            case Self.certificateBag:
                let certificate = try ASN1Walk.children(value, field, atLeast: 2)
                guard try ASN1ObjectIdentifier(berEncoded: certificate[0]) == Self.x509Certificate else { continue }
                certificates.append(try Certificate(derEncoded: try ASN1Walk.octets(try ASN1Walk.explicit(certificate[1], field), field)))
            case Self.shroudedKeyBag:
                let encrypted = try ASN1Walk.children(value, field, atLeast: 2)
                let keyInfo = try PasswordBasedEncryption.decrypt(try ASN1Walk.octets(encrypted[1], field), algorithm: encrypted[0],
                                                                  password: password, field: field)
                privateKeys.append(try Self.privateKey(pkcs8: keyInfo, field: field))
            case Self.keyBag:
                privateKeys.append(try Self.privateKey(pkcs8: Array(value.encodedBytes), field: field))
            default:
                continue
            }
        }
    }

    /// A PKCS#8 PrivateKeyInfo, through swift-certificates' PEM reader.
    static func privateKey(pkcs8 der: [UInt8], field: String) throws(PassError) -> Certificate.PrivateKey {
        do {
            return try Certificate.PrivateKey(pemDocument: PEMDocument(type: "PRIVATE KEY", derBytes: der))
        } catch {
            throw PassError(field, "a private key that cannot be read (RSA, EC P-256/384/521 or Ed25519 expected): \(error)")
        }
    }
}

/// The PKCS#12 integrity MAC: HMAC over the authenticated safe with a key from the PKCS#12 key
/// derivation (RFC 7292 appendix B) of the password as a BMPString.
enum PKCS12MAC {
    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let sha384: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 2]
    static let sha512: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 3]

    static func check(_ macData: ASN1Node, content: [UInt8], password: String, field: String) throws(PassError) {
        do {
            let parts = try ASN1Walk.children(macData, field, atLeast: 2)
            let digestInfo = try ASN1Walk.children(parts[0], field, atLeast: 2)
            let algorithm = try ASN1ObjectIdentifier(berEncoded: ASN1Walk.children(digestInfo[0], field)[0])
            let expected = Array(try ASN1OctetString(berEncoded: digestInfo[1]).bytes)
            let salt = Array(try ASN1OctetString(berEncoded: parts[1]).bytes)
            let iterations = parts.count > 2 ? try Int(berEncoded: parts[2]) : 1
            guard (1...PasswordBasedEncryption.maximumIterations).contains(iterations) else {
                throw PassError(field, "\(iterations) MAC iterations; 1 to \(PasswordBasedEncryption.maximumIterations) are read")
            }
            let computed: [UInt8]
            switch algorithm {
            case sha1: computed = mac(Insecure.SHA1.self, blockSize: 64, content, password, salt, iterations)
            case sha256: computed = mac(SHA256.self, blockSize: 64, content, password, salt, iterations)
            case sha384: computed = mac(SHA384.self, blockSize: 128, content, password, salt, iterations)
            case sha512: computed = mac(SHA512.self, blockSize: 128, content, password, salt, iterations)
            default: throw PassError(field, "a MAC with \(algorithm) is not read")
            }
            guard computed == expected else { throw PassError(field, "wrong password (the file's integrity check fails)") }
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError(field, "an unreadable MAC: \(error)")
        }
    }

    static func mac<H: HashFunction>(_ hash: H.Type, blockSize: Int, _ content: [UInt8], _ password: String, _ salt: [UInt8], _ iterations: Int) -> [UInt8] {
        let key = derive(hash, blockSize: blockSize, purpose: 3, password: password, salt: salt, iterations: iterations,
                         length: H.Digest.byteCount)
        return Array(HMAC<H>.authenticationCode(for: content, using: SymmetricKey(data: key)))
    }

    /// RFC 7292 B.2, for the MAC key (purpose 3).
    static func derive<H: HashFunction>(_ hash: H.Type, blockSize v: Int, purpose: UInt8, password: String, salt: [UInt8],
                                        iterations: Int, length: Int) -> [UInt8] {
        var bmp: [UInt8] = []
        for unit in password.utf16 { bmp += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        bmp += [0, 0]
        func stretched(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let total = v * ((bytes.count + v - 1) / v)
            return (0..<total).map { bytes[$0 % bytes.count] }
        }
        let diversifier = [UInt8](repeating: purpose, count: v)
        var input: [UInt8] = stretched(salt) + stretched(bmp)
        var output: [UInt8] = []
        while output.count < length {
            var block = Array(H.hash(data: diversifier + input))
            for _ in 1..<iterations { block = Array(H.hash(data: block)) }
            output += block
            let b = stretched(block)
            for start in stride(from: 0, to: input.count, by: v) {
                var carry = 1
                for index in stride(from: v - 1, through: 0, by: -1) {
                    let sum = Int(input[start + index]) + Int(b[index]) + carry
                    input[start + index] = UInt8(sum & 0xFF)
                    carry = sum >> 8
                }
            }
        }
        return Array(output.prefix(length))
    }
}
