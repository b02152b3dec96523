/// Hexadecimal text as people paste it: `02011a`, `02 01 1A`, `02:01:1a`, `0x02011a`.
public enum Hex {
    /// Lower-case hex digits with no separators, e.g. `02011a`.
    public static func string(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var parts: [String] = []
        for byte in bytes {
            parts.append(String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]))
        }
        return parts.joined(separator: separator)
    }

    /// Parses hex digits, ignoring spaces, tabs, colons, dashes and a leading `0x`.
    /// The error names the character position (counted from 0) of the offending character.
    public static func bytes(_ text: String) throws(DecodeError) -> [UInt8] {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        var result: [UInt8] = []
        result.reserveCapacity(body.utf8.count / 2)
        var pending: UInt8? = nil
        var position = text.utf8.count - body.utf8.count
        for character in body.utf8 {
            defer { position += 1 }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "\r"):
                guard pending == nil else {
                    throw DecodeError(field: "hex text", offset: position,
                                      expected: "digits in pairs (one byte = two digits)", found: "a lone digit before a separator")
                }
                continue
            default:
                throw DecodeError(field: "hex text", offset: position, expected: "a hexadecimal digit 0-9 or a-f",
                                  found: "'\(String(decoding: [character], as: UTF8.self))'")
            }
            if let high = pending {
                result.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
        }
        if pending != nil {
            throw DecodeError(field: "hex text", offset: position, expected: "an even number of hex digits",
                              found: "an odd number")
        }
        return result
    }
}
