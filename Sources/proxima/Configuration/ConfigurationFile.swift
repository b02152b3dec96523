import Foundation

/// An options file for the long-running commands: `[serve]`, `[gateway]` and `[advertise]`
/// sections of `name = value` lines, where a name is a long option without its dashes.
///
///     # /etc/proxima/proxima.conf
///     [serve]
///     database = sqlite:/var/lib/proxima/proxima.sqlite
///     host = 0.0.0.0
///     demo = false
///
/// A value may be double-quoted (to keep spaces or a `#`); an option that repeats is given on
/// several lines. The format is deliberately this small: every line maps to one argument.
struct ConfigurationFile: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var name: String
        var value: String
        var line: Int
    }

    /// What a file may hold: enough for any deployment, small enough that a wrong path (a
    /// database, a log) is refused quickly instead of being read.
    static let maximumBytes = 256 * 1024
    static let maximumEntries = 2_000

    var path: String
    var sections: [String: [Entry]]

    func entries(for command: String) -> [Entry] { sections[command] ?? [] }

    static func load(path: String) throws -> ConfigurationFile {
        let url = URL(fileURLWithPath: path)
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: url) } catch {
            throw ConfigurationError(path: path, line: nil, "cannot be read: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumBytes + 1)) ?? Data()
        guard data.count <= maximumBytes else {
            throw ConfigurationError(path: path, line: nil, "is larger than \(maximumBytes) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(path: path, line: nil, "is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws -> ConfigurationFile {
        var sections: [String: [Entry]] = [:]
        var section: String?
        var count = 0
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigurationError(path: path, line: lineNumber, "a section header is [name], found \(quoted(line))")
                }
                let name = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                guard isName(name) else {
                    throw ConfigurationError(path: path, line: lineNumber, "section name \(quoted(name)) is not a command name")
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(path: path, line: lineNumber, "expected name = value, found \(quoted(line))")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard isName(name) else {
                throw ConfigurationError(path: path, line: lineNumber, "key \(quoted(name)) is not an option name (letters, digits and dashes)")
            }
            guard let section else {
                throw ConfigurationError(path: path, line: lineNumber, "key \(quoted(name)) comes before any [serve], [gateway] or [advertise] section")
            }
            let value = try parseValue(line[line.index(after: equals)...], path: path, line: lineNumber, key: name)
            count += 1
            guard count <= maximumEntries else {
                throw ConfigurationError(path: path, line: lineNumber, "more than \(maximumEntries) entries")
            }
            sections[section, default: []].append(Entry(name: name, value: value, line: lineNumber))
        }
        return ConfigurationFile(path: path, sections: sections)
    }

    private static func parseValue(_ raw: Substring, path: String, line: Int, key: String) throws -> String {
        let text = raw.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("\"") else {
            // An unquoted value ends at a comment.
            let uncommented = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return uncommented.trimmingCharacters(in: .whitespaces)
        }
        var value = ""
        var escaped = false
        var closed: String.Index?
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                value.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                closed = index
                break
            } else {
                value.append(character)
            }
            index = text.index(after: index)
        }
        guard let closed else {
            throw ConfigurationError(path: path, line: line, "value of \(quoted(key)) has no closing quote")
        }
        let rest = text[text.index(after: closed)...].trimmingCharacters(in: .whitespaces)
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw ConfigurationError(path: path, line: line, "unexpected \(quoted(rest)) after the quoted value of \(quoted(key))")
        }
        return value
    }

    static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.first != "-"
            && name.unicodeScalars.allSatisfy { ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || $0 == "-" }
    }

    private static func quoted(_ text: String) -> String {
        "'\(text.count > 60 ? text.prefix(60) + "…" : text)'"
    }
}

/// A configuration problem, located by file and line where it has one.
struct ConfigurationError: Error, CustomStringConvertible {
    var path: String
    var line: Int?
    var message: String

    init(path: String, line: Int?, _ message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    var description: String {
        if let line { return "\(path):\(line): \(message)" }
        return "\(path): \(message)"
    }
}
