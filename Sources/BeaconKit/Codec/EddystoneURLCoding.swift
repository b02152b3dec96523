/// Eddystone-URL's compressed URL (github.com/google/eddystone, eddystone-url/README.md):
/// a scheme byte, then printable ASCII with bytes 0x00–0x0D standing for common endings.
enum EddystoneURLCoding {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]
    /// The most bytes of encoded URL that fit in one Eddystone-URL frame.
    static let maximumEncodedLength = 17

    static func expand(_ buffer: UnsafeRawBufferPointer, scheme: Int, end: Int, baseOffset: Int) throws(DecodeError) -> String {
        let schemeByte = buffer[scheme]
        guard Int(schemeByte) < schemes.count else {
            throw DecodeError(field: "Eddystone-URL scheme", offset: baseOffset + scheme,
                              expected: "0x00-0x03 (http://www., https://www., http://, https://)", found: hexByte(schemeByte))
        }
        var url = schemes[Int(schemeByte)]
        var position = scheme + 1
        while position < end {
            let byte = buffer[position]
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                throw DecodeError(field: "Eddystone-URL character", offset: baseOffset + position,
                                  expected: "0x00-0x0D (an expansion) or printable ASCII 0x21-0x7E", found: hexByte(byte))
            }
            position += 1
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
