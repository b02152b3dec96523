@testable import BeaconLocate
import Foundation
import Testing

/// `CSVLines` walks Unicode scalars for speed; it must split and trim as the Character-based
/// reading it replaced did (line ends of `Character.isNewline`, "\r\n" as one, fields trimmed of
/// `CharacterSet.whitespaces`), so that line numbers in errors and every cell stay the same.
@Suite struct CSVLinesTests {
    private func characterLines(_ text: String) -> [[String]?] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { line in
            line.allSatisfy({ $0 == " " || $0 == "\t" }) ? nil
                : line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    private func numbered(_ lines: [[String]?]) -> [String] {
        lines.enumerated().compactMap { number, fields in fields.map { "\(number + 1): \($0)" } }
    }

    @Test func splitsAndTrimsAsCharactersDo() {
        let pieces = ["a", "b3001", "-67", "é", "1.5", ",", ",", " ", " ", "\t", "\u{A0}", "\u{3000}", "\u{2009}",
                      "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", "x\u{301}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0...40, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let scalarLines = CSVLines(text).map { "\($0.number): \($0.fields)" }
            #expect(scalarLines == numbered(characterLines(text)), "\(text.debugDescription)")
        }
    }

    @Test func numbersLinesAcrossBlankAndMixedLineEnds() {
        let lines = CSVLines("id,x\r\n\r\n  \t \nb1 , 2\rb2,\u{A0}3\u{A0}\n")
        #expect(lines.map(\.number) == [1, 4, 5])
        #expect(lines.map(\.fields) == [["id", "x"], ["b1", "2"], ["b2", "3"]])
    }
}
