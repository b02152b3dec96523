/// Cleans operator-supplied HTML for messages shown on visitors' phones.
///
/// Safety rests on the allow-list and on re-writing, not on recognising attacks: the input is
/// split into text, tags, comments and declarations, and the output is written afresh from the
/// pieces that are allowed: only the elements and attributes below, text with `<` and `>` (and
/// any `&` that does not start a character reference) escaped, attribute values double-quoted and
/// escaped, and every element closed. Whatever else the input held (scripts, styles, event
/// handler attributes, `javascript:` and `data:` URLs, comments) is left out and named in
/// ``Result/removed``. The scan is linear in the input: an unterminated tag, comment or script
/// drops the rest of the input instead of searching again.
public enum HTMLSanitiser {
    public struct Result: Sendable, Hashable {
        public var html: String
        /// What was left out, once each, in order of first appearance (at most ``removedLimit``).
        public var removed: [String]
    }

    /// Elements kept, with the attributes each may carry.
    static let allowed: [String: Set<String>] = [
        "p": [], "br": [], "b": [], "strong": [], "i": [], "em": [], "u": [], "s": [], "small": [], "mark": [],
        "h1": [], "h2": [], "h3": [], "h4": [], "ul": [], "ol": [], "li": [], "blockquote": [], "code": [], "pre": [],
        "span": [], "a": ["href", "title"],
    ]
    static let voidElements: Set<String> = ["br"]
    /// Elements whose content is code or hidden text rather than words to show: left out with
    /// everything up to their end tag.
    static let droppedWithContent: Set<String> = [
        "script", "style", "iframe", "object", "embed", "template", "noscript", "textarea", "title", "xmp",
        "noembed", "noframes", "svg", "math", "head", "select", "plaintext",
    ]
    /// URL schemes a link may use; a URL without a scheme (relative) is kept too.
    static let allowedSchemes: Set<String> = ["http", "https", "mailto", "tel"]
    static let maximumDepth = 32
    static let removedLimit = 20

    public static func sanitise(_ input: String) -> Result {
        var scanner = Scanner(bytes: Array(input.utf8))
        scanner.run()
        return Result(html: String(decoding: scanner.output, as: UTF8.self), removed: scanner.removed)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var output: [UInt8] = []
        var removed: [String] = []
        var open: [String] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            output.reserveCapacity(bytes.count)
        }

        mutating func run() {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "<") {
                    markup()
                } else {
                    text(until: nextIndex(of: UInt8(ascii: "<"), from: index) ?? bytes.count)
                }
            }
            while let element = open.popLast() { write("</\(element)>") }
        }

        // MARK: Markup

        mutating func markup() {
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            if starts(with: "<!--", at: index) {
                note("comment")
                index = range(of: "-->", from: index + 4).map { $0 + 3 } ?? bytes.count
            } else if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") {
                note("declaration")
                index = nextIndex(of: UInt8(ascii: ">"), from: index).map { $0 + 1 } ?? bytes.count
            } else if next == UInt8(ascii: "/"), index + 2 < bytes.count, isLetter(bytes[index + 2]) {
                endTag()
            } else if isLetter(next) {
                startTag()
            } else {
                write("&lt;")
                index += 1
            }
        }

        mutating func startTag() {
            var cursor = index + 1
            let name = readName(&cursor)
            var attributes: [(name: String, value: String)] = []
            var closed = false
            while cursor < bytes.count {
                let byte = bytes[cursor]
                if byte == UInt8(ascii: ">") { closed = true; cursor += 1; break }
                if isSpace(byte) || byte == UInt8(ascii: "/") { cursor += 1; continue }
                let attributeName = readAttributeName(&cursor)
                while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                var value = ""
                if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "=") {
                    cursor += 1
                    while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                    value = readAttributeValue(&cursor)
                }
                if !attributes.contains(where: { $0.name == attributeName }) { attributes.append((attributeName, value)) }
            }
            guard closed else {
                note("unterminated tag <\(name)")
                index = bytes.count
                return
            }
            index = cursor
            if droppedWithContent.contains(name) {
                note("element \(name)")
                index = endOfElement(name, from: index)
                return
            }
            guard let permitted = allowed[name] else {
                note("element \(name)")
                return
            }
            guard open.count < maximumDepth else {
                note("elements nested deeper than \(maximumDepth)")
                return
            }
            var tag = "<" + name
            var linked = false
            for attribute in attributes {
                guard permitted.contains(attribute.name) else {
                    note("attribute \(attribute.name)")
                    continue
                }
                var value = CharacterReferences.decode(attribute.value)
                if attribute.name == "href" {
                    guard let url = safeURL(value) else { continue }
                    value = url
                    linked = true
                }
                tag += " \(attribute.name)=\"\(escapeAttribute(value))\""
            }
            if linked { tag += " rel=\"nofollow noopener noreferrer\"" }
            write(tag + ">")
            if !voidElements.contains(name) { open.append(name) }
        }

        mutating func endTag() {
            var cursor = index + 2
            let name = readName(&cursor)
            guard let close = nextIndex(of: UInt8(ascii: ">"), from: cursor) else {
                index = bytes.count
                return
            }
            index = close + 1
            guard let position = open.lastIndex(of: name) else { return }
            while open.count > position { write("</\(open.removeLast())>") }
        }

        /// Where the content of a dropped element ends: after its end tag, or at the end of input.
        func endOfElement(_ name: String, from start: Int) -> Int {
            var cursor = start
            while let at = range(of: "</", from: cursor) {
                var nameEnd = at + 2
                let found = readName(&nameEnd)
                if found == name {
                    return nextIndex(of: UInt8(ascii: ">"), from: nameEnd).map { $0 + 1 } ?? bytes.count
                }
                cursor = at + 2
            }
            return bytes.count
        }

        /// The URL as a browser will read it (tabs and newlines removed, outer spaces and
        /// controls trimmed), or nil when its scheme is not allowed.
        mutating func safeURL(_ value: String) -> String? {
            let kept = value.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }
            let trimmed = kept.drop { $0.value <= 0x20 }.reversed().drop { $0.value <= 0x20 }.reversed()
            let cleaned = String(String.UnicodeScalarView(trimmed))
            let schemeEnd = cleaned.firstIndex { ":/?#".contains($0) }
            if let schemeEnd, cleaned[schemeEnd] == ":" {
                let scheme = cleaned[..<schemeEnd].lowercased()
                guard HTMLSanitiser.allowedSchemes.contains(scheme) else {
                    note("URL scheme \(scheme.prefix(20)):")
                    return nil
                }
            }
            guard !cleaned.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                note("URL with control characters")
                return nil
            }
            return cleaned
        }

        // MARK: Text

        mutating func text(until end: Int) {
            while index < end {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: ">"): write("&gt;")
                case UInt8(ascii: "&"):
                    if let length = CharacterReferences.referenceLength(bytes, at: index) {
                        output.append(contentsOf: bytes[index..<(index + length)])
                        index += length
                        continue
                    }
                    write("&amp;")
                case 0..<0x09, 0x0B, 0x0C, 0x0E..<0x20, 0x7F:
                    note("control characters")
                default: output.append(byte)
                }
                index += 1
            }
        }

        // MARK: Reading

        func readName(_ cursor: inout Int) -> String {
            let start = cursor
            while cursor < bytes.count, !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: "/"), bytes[cursor] != UInt8(ascii: ">") { cursor += 1 }
            return String(decoding: bytes[start..<cursor], as: UTF8.self).lowercased()
        }

        func readAttributeName(_ cursor: inout Int) -> String {
            let start = cursor
            cursor += 1
            while cursor < bytes.count, !isSpace(bytes[cursor]), !"/>=".utf8.contains(bytes[cursor]) { cursor += 1 }
            return String(decoding: bytes[start..<cursor], as: UTF8.self).lowercased()
        }

        func readAttributeValue(_ cursor: inout Int) -> String {
            guard cursor < bytes.count else { return "" }
            let quote = bytes[cursor]
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                let start = cursor + 1
                let end = nextIndex(of: quote, from: start) ?? bytes.count
                cursor = min(end + 1, bytes.count)
                return String(decoding: bytes[start..<end], as: UTF8.self)
            }
            let start = cursor
            while cursor < bytes.count, !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">") { cursor += 1 }
            return String(decoding: bytes[start..<cursor], as: UTF8.self)
        }

        func nextIndex(of byte: UInt8, from start: Int) -> Int? {
            var cursor = start
            while cursor < bytes.count {
                if bytes[cursor] == byte { return cursor }
                cursor += 1
            }
            return nil
        }

        /// The first place `needle` starts, matching ASCII letters in any case.
        func range(of needle: String, from start: Int) -> Int? {
            let pattern = Array(needle.utf8)
            var cursor = start
            while cursor + pattern.count <= bytes.count {
                if starts(with: pattern, at: cursor) { return cursor }
                cursor += 1
            }
            return nil
        }

        func starts(with needle: String, at position: Int) -> Bool { starts(with: Array(needle.utf8), at: position) }

        func starts(with pattern: [UInt8], at position: Int) -> Bool {
            guard position + pattern.count <= bytes.count else { return false }
            for offset in 0..<pattern.count where lowercase(bytes[position + offset]) != lowercase(pattern[offset]) { return false }
            return true
        }

        func lowercase(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
        func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

        // MARK: Writing

        mutating func write(_ text: String) { output.append(contentsOf: text.utf8) }

        mutating func note(_ what: String) {
            guard removed.count < HTMLSanitiser.removedLimit, !removed.contains(what) else { return }
            removed.append(what)
        }

        func escapeAttribute(_ value: String) -> String {
            var escaped = ""
            for character in value {
                switch character {
                case "&": escaped += "&amp;"
                case "\"": escaped += "&quot;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case _ where character.unicodeScalars.contains { $0.properties.generalCategory == .control }: continue
                default: escaped.append(character)
                }
            }
            return escaped
        }
    }
}

/// HTML character references (`&amp;`, `&#106;`, `&#x6A;`), as far as a sanitiser needs them:
/// attribute values are decoded before their URL is checked and written back escaped, so the
/// browser reads exactly the checked value; in text, a well-formed reference is kept as written.
enum CharacterReferences {
    /// Named references worth decoding in a URL (the ones that spell URL punctuation), and the
    /// common ones.
    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "colon": ":", "tab": "\t",
        "newline": "\n", "sol": "/", "quest": "?", "num": "#", "period": ".", "lpar": "(", "rpar": ")", "equals": "=",
    ]

    /// Decodes numeric references (with or without the closing `;`, as browsers do) and the
    /// named ones above (with `;`, or the five legacy names without it).
    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "&" else {
                result.append(scalars[index])
                index += 1
                continue
            }
            var cursor = index + 1
            if cursor < scalars.count, scalars[cursor] == "#" {
                cursor += 1
                let hex = cursor < scalars.count && (scalars[cursor] == "x" || scalars[cursor] == "X")
                if hex { cursor += 1 }
                let digitsStart = cursor
                var value: UInt32 = 0
                while cursor < scalars.count, let digit = Int(String(scalars[cursor]), radix: hex ? 16 : 10) {
                    value = min(value &* (hex ? 16 : 10) &+ UInt32(digit), 0x11_0000)
                    cursor += 1
                }
                if cursor > digitsStart {
                    if cursor < scalars.count, scalars[cursor] == ";" { cursor += 1 }
                    result.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                    index = cursor
                    continue
                }
            } else {
                while cursor < scalars.count, cursor - index <= 10, scalars[cursor].properties.isAlphabetic { cursor += 1 }
                let name = String(String.UnicodeScalarView(scalars[(index + 1)..<cursor])).lowercased()
                let terminated = cursor < scalars.count && scalars[cursor] == ";"
                if let replacement = named[name], terminated || ["amp", "lt", "gt", "quot", "nbsp"].contains(name) {
                    result.append(contentsOf: replacement.unicodeScalars)
                    index = terminated ? cursor + 1 : cursor
                    continue
                }
            }
            result.append("&")
            index += 1
        }
        return String(result)
    }

    /// The length of a well-formed reference starting at `start` (`&name;`, `&#123;`, `&#x1F;`),
    /// nil when the `&` starts none and must be escaped.
    static func referenceLength(_ bytes: [UInt8], at start: Int) -> Int? {
        var cursor = start + 1
        let numeric = cursor < bytes.count && bytes[cursor] == UInt8(ascii: "#")
        if numeric { cursor += 1 }
        let hex = numeric && cursor < bytes.count && (bytes[cursor] | 0x20) == UInt8(ascii: "x")
        if hex { cursor += 1 }
        let digitsStart = cursor
        while cursor < bytes.count, cursor - start < 32 {
            let byte = bytes[cursor]
            let isDigit = (48...57).contains(byte)
            let isHexLetter = (97...102).contains(byte | 0x20)
            let isLetter = (97...122).contains(byte | 0x20)
            guard numeric ? (isDigit || (hex && isHexLetter)) : (isLetter || isDigit) else { break }
            cursor += 1
        }
        guard cursor > digitsStart, cursor < bytes.count, bytes[cursor] == UInt8(ascii: ";") else { return nil }
        return cursor + 1 - start
    }
}
