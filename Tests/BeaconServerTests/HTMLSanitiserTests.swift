@testable import BeaconServer
import Foundation
import Testing

/// The message sanitiser keeps its allow-list and writes well-formed, escaped HTML whatever it is
/// given. The attack inputs are the classic filter-evasion forms (case games, entity-encoded
/// schemes, whitespace inside schemes, unquoted and unterminated attributes, comments).
@Suite("HTML sanitiser")
struct HTMLSanitiserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var input: String
        var output: String
        var testDescription: String { input }
    }

    static let cases: [Case] = [
        Case(input: "Plain words", output: "Plain words"),
        Case(input: "<p>Hello <b>there</b></p>", output: "<p>Hello <b>there</b></p>"),
        Case(input: "<P CLASS=x>Shout</P>", output: "<p>Shout</p>"),
        Case(input: "<script>alert(1)</script>Hi", output: "Hi"),
        Case(input: "<SCRIPT SRC=//evil/x.js></SCRIPT>Hi", output: "Hi"),
        Case(input: "<style>body{display:none}</style>Hi", output: "Hi"),
        Case(input: "<img src=x onerror=alert(1)>Hi", output: "Hi"),
        Case(input: "<b onmouseover=\"alert(1)\">x</b>", output: "<b>x</b>"),
        Case(input: "<a href=\"https://example.com/a?b=1&amp;c=2\">x</a>",
             output: "<a href=\"https://example.com/a?b=1&amp;c=2\" rel=\"nofollow noopener noreferrer\">x</a>"),
        Case(input: "<a href=\"javascript:alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"JaVaScRiPt:alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\" java\tscript:alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"&#106;avascript:alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"&#x6A&#x61vascript:alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"javascript&colon;alert(1)\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"data:text/html;base64,PHNjcmlwdD4=\">x</a>", output: "<a>x</a>"),
        Case(input: "<a href=\"/map#floor-2\">map</a>", output: "<a href=\"/map#floor-2\" rel=\"nofollow noopener noreferrer\">map</a>"),
        Case(input: "<a href=mailto:desk@example.com>desk</a>",
             output: "<a href=\"mailto:desk@example.com\" rel=\"nofollow noopener noreferrer\">desk</a>"),
        Case(input: "<a title='say \"hi\"'>x</a>", output: "<a title=\"say &quot;hi&quot;\">x</a>"),
        Case(input: "<!-- <script>alert(1)</script> -->Hi", output: "Hi"),
        Case(input: "<!DOCTYPE html><?xml x?>Hi", output: "Hi"),
        Case(input: "1 < 2 > 0 & done", output: "1 &lt; 2 &gt; 0 &amp; done"),
        Case(input: "caf&eacute; &#233; &amp;", output: "caf&eacute; &#233; &amp;"),
        Case(input: "<b><i>unclosed", output: "<b><i>unclosed</i></b>"),
        Case(input: "</b>stray end<br>line", output: "stray end<br>line"),
        Case(input: "<b>bold <i>both</b> after", output: "<b>bold <i>both</i></b> after"),
        Case(input: "<p>cut <a href=\"x", output: "<p>cut </p>"),
        Case(input: "<script>never closed", output: ""),
        Case(input: "<iframe src=//evil></iframe><svg onload=alert(1)><circle/></svg>ok", output: "ok"),
        Case(input: "<div><span>kept words</span></div>", output: "<span>kept words</span>"),
        Case(input: "<a href=\"https://x\" href=\"javascript:alert(1)\">x</a>",
             output: "<a href=\"https://x\" rel=\"nofollow noopener noreferrer\">x</a>"),
    ]

    @Test(arguments: cases)
    func cleans(example: Case) {
        #expect(HTMLSanitiser.sanitise(example.input).html == example.output)
    }

    @Test func namesWhatItLeftOut() {
        let result = HTMLSanitiser.sanitise("<p onclick=x>a</p><script>b</script><a href=\"vbscript:x\">c</a><!-- d -->")
        #expect(result.removed == ["attribute onclick", "element script", "URL scheme vbscript:", "comment"])
        #expect(HTMLSanitiser.sanitise("<p>fine</p>").removed.isEmpty)
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "<b>", count: 100) + "x"
        let html = HTMLSanitiser.sanitise(deep).html
        #expect(html.components(separatedBy: "<b>").count - 1 == HTMLSanitiser.maximumDepth)
        #expect(html.components(separatedBy: "</b>").count - 1 == HTMLSanitiser.maximumDepth)
    }

    /// Whatever bytes come in, the output has only allowed tags, with only allowed attributes.
    @Test func outputHasOnlyAllowedMarkupForRandomInput() {
        var generator = SeededGenerator(seed: 13)
        let pieces = ["<", ">", "/", "a", "b", "script", "p", " ", "=", "\"", "'", "href", "onclick", "javascript:", "&", "#", ";", "!--", "-->", "x", "\n"]
        for _ in 0..<2_000 {
            let input = (0..<Int.random(in: 1...40, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let html = HTMLSanitiser.sanitise(input).html
            for tag in Self.tags(in: html) {
                let name = tag.split(separator: " ").first.map(String.init) ?? ""
                let bare = name.hasPrefix("/") ? String(name.dropFirst()) : name
                let permitted = HTMLSanitiser.allowed[bare]
                #expect(permitted != nil, "tag <\(tag)> from \(input)")
                for (attribute, value) in Self.attributes(in: tag) {
                    #expect(attribute == "rel" || permitted?.contains(attribute) == true, "attribute \(attribute) in <\(tag)> from \(input)")
                    if attribute == "href" { #expect(!value.lowercased().contains("javascript:"), "from \(input)") }
                }
            }
        }
    }

    /// Name and value of each `name="value"` in a sanitised tag (values never hold a raw `"`).
    static func attributes(in tag: String) -> [(String, String)] {
        tag.components(separatedBy: "\"").dropLast().enumerated().reduce(into: [(String, String)]()) { pairs, part in
            guard part.offset % 2 == 0 else { return }
            let name = part.element.split(separator: " ").last.map { String($0.dropLast()) } ?? ""
            let parts = tag.components(separatedBy: "\"")
            pairs.append((name, part.offset + 1 < parts.count ? parts[part.offset + 1] : ""))
        }
    }

    /// The text between `<` and `>` of each tag in sanitised output (where `<` only opens tags).
    static func tags(in html: String) -> [String] {
        html.split(separator: "<", omittingEmptySubsequences: true).dropFirst(html.hasPrefix("<") ? 0 : 1).compactMap { piece in
            piece.firstIndex(of: ">").map { String(piece[..<$0]) }
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failure repeats.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
