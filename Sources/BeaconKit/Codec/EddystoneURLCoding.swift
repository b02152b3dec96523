/// Eddystone-URL's compressed URL (github.com/google/eddystone, eddystone-url/README.md):
/// a scheme byte, then printable ASCII with bytes 0x00–0x0D standing for common endings.
@usableFromInline
enum EddystoneURLCoding {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
    /// The most bytes of encoded URL that fit in one Eddystone-URL frame.
    static let maximumEncodedLength = 17

    /// Checks a compressed URL without building it: the scheme byte, then expansions or
    /// printable ASCII.
    @inlinable @inline(__always)
    static func validate(_ buffer: UnsafeRawBufferPointer, scheme: Int, end: Int) throws(DecodeError) {
        guard buffer[scheme] < 4 else {
            throw DecodeFailure.value("Eddystone-URL scheme", at: scheme,
                                      expected: "0x00-0x03 (http://www., https://www., http://, https://)", found: buffer[scheme])
        }
        var position = scheme + 1
        while position < end {
            let byte = buffer[position]
            guard byte <= 0x0D || (byte >= 0x21 && byte <= 0x7E) else {
                throw DecodeFailure.value("Eddystone-URL character", at: position,
                                          expected: "0x00-0x0D (an expansion) or printable ASCII 0x21-0x7E", found: byte)
            }
            position += 1
        }
    }

    /// Expands a compressed URL that `validate` accepted.
    static func expand(_ buffer: UnsafeRawBufferPointer, scheme: Int, end: Int) -> String {
        var url = schemes[Int(buffer[scheme])]
        for position in (scheme + 1)..<max(scheme + 1, end) {
            let byte = buffer[position]
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return url
    }

    /// Encodes a URL, or nil when its scheme is not one of the four or it holds a character
    /// outside printable ASCII.
    static func compress(_ url: String) -> [UInt8]? {
        guard let (schemeIndex, scheme) = schemes.enumerated()
            .filter({ url.hasPrefix($0.element) })
            .max(by: { $0.element.count < $1.element.count }) else { return nil }
        var encoded: [UInt8] = [UInt8(schemeIndex)]
        var rest = Substring(url.dropFirst(scheme.count))
        while let first = rest.unicodeScalars.first {
            // Prefer ".com/" over ".com": the list puts the slash forms first.
            if let index = expansions.firstIndex(where: { rest.hasPrefix($0) }) {
                encoded.append(UInt8(index))
                rest = rest.dropFirst(expansions[index].count)
                continue
            }
            guard first.isASCII, (0x21...0x7E).contains(first.value) else { return nil }
            encoded.append(UInt8(first.value))
            rest = rest.dropFirst()
        }
        return encoded
    }
}
