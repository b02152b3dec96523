import Foundation

/// Text made safe to place in a generated POSIX shell script, whatever it contains: an argument
/// becomes exactly one word, a label stays inside its comment line.
public enum ShellQuoting {
    /// `text` unchanged when it holds only characters no shell treats specially, otherwise in
    /// single quotes, inside which `sh` reads every byte literally; a quote inside is written
    /// `'\''` (close, escaped quote, reopen). A NUL cannot be passed to a command at all and is
    /// written as the visible escape `\0`.
    public static func word(_ text: String) -> String {
        if !text.isEmpty && text.unicodeScalars.allSatisfy(isPlain) { return text }
        let inner = text.replacingOccurrences(of: "'", with: #"'\''"#).replacingOccurrences(of: "\0", with: #"\0"#)
        return "'" + inner + "'"
    }

    /// A `# …` comment line: line breaks and other control characters are written as visible
    /// escapes (`\n`, `\r`, `\u{2028}`), so the text cannot end the comment and start a command.
    public static func comment(_ text: String) -> String {
        var line = "# "
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": line += #"\n"#
            case "\r": line += #"\r"#
            case "\t": line += #"\t"#
            case "\\": line += #"\\"#
            default:
                if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .lineSeparator
                    || scalar.properties.generalCategory == .paragraphSeparator || scalar.properties.generalCategory == .format {
                    line += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    line.unicodeScalars.append(scalar)
                }
            }
        }
        return line
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", ":", "/", "+", "@", "%", ",": true
        default: false
        }
    }
}
