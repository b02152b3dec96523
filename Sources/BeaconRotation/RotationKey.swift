import Crypto
import Foundation

/// The secret a rotating beacon and the server share: 16 to 32 bytes, written as hex
/// (32 to 64 hex digits) or as base64.
///
/// A string made only of hex digits is read as hex (and must have 32 to 64 of them), anything
/// else as base64, so a hex key never becomes a shorter base64 one by accident.
public struct RotationKey: Sendable, Hashable {
    public static let allowedLengths = 16...32

    public let bytes: [UInt8]

    public init(bytes: [UInt8], field: String = "key") throws(RotationInputError) {
        guard Self.allowedLengths.contains(bytes.count) else {
            throw RotationInputError(field: field, reason: "expected a key of 16 to 32 bytes, found \(bytes.count) bytes")
        }
        self.bytes = bytes
    }

    /// Reads a key written as hex or base64; `field` names where it came from in errors.
    public init(parsing text: String, field: String = "key") throws(RotationInputError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw RotationInputError(field: field, reason: "expected 16 to 32 bytes as hex (32 to 64 hex digits) or base64, found nothing")
        }
        guard trimmed.utf8.count <= 200 else {
            throw RotationInputError(field: field, reason: "expected at most 64 hex digits or 44 base64 characters, found \(trimmed.utf8.count) characters")
        }
        if trimmed.allSatisfy(\.isHexDigit) {
            guard let hex = Self.hexBytes(trimmed) else {
                throw RotationInputError(field: field, reason: "expected 32 to 64 hex digits (16 to 32 bytes), found \(trimmed.count) hex digits")
            }
            try self.init(bytes: hex, field: field)
            return
        }
        if let data = Data(base64Encoded: trimmed) {
            try self.init(bytes: Array(data), field: field)
            return
        }
        let firstBad = trimmed.firstIndex { !($0.isASCII && ($0.isLetter || $0.isNumber || "+/=".contains($0))) }
        let position = firstBad.map { " (offset \(trimmed.distance(from: trimmed.startIndex, to: $0)): '\(trimmed[$0])')" } ?? ""
        throw RotationInputError(field: field, reason: "expected 16 to 32 bytes as hex (32 to 64 hex digits) or base64, found neither\(position)")
    }

    /// A short public name for the key, safe to show: the first 8 bytes of SHA-256 of the key, in hex.
    public var fingerprint: String {
        SHA256.hash(data: bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, (32...64).contains(digits.count) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
