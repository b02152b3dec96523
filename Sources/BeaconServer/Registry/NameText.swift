/// Names and labels travel into consoles, CSV files, shell recipes and SQLite, which cuts text at
/// a NUL. A name with a control character (U+0000–U+001F, U+007F–U+009F) is refused, naming the
/// field, rather than stored altered or echoed differently from what was stored.
enum NameText {
    static func check(_ text: String, field: String) throws(RegistryError) {
        for (offset, scalar) in text.unicodeScalars.enumerated() where scalar.properties.generalCategory == .control {
            let code = "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
            throw RegistryError(.invalid, field: field,
                "expected text without control characters, found \(code) at character \(offset)")
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
