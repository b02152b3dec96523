import Foundation

/// Options for `serve`, `gateway` and `advertise` from three layers, with one rule: a flag on
/// the command line wins, then a `PROXIMA_*` environment variable, then the options file
/// (`--config-file`, or `PROXIMA_CONFIG_FILE`). Each layer is turned into ordinary arguments,
/// so the parser validates a value from a file exactly as it validates one typed by hand.
struct LayeredArguments: Sendable {
    /// Where one resolved option came from, for `--show-config`.
    enum Source: Sendable, Equatable, CustomStringConvertible {
        case commandLine
        case environment(String)
        case file(String, line: Int)

        var description: String {
            switch self {
            case .commandLine: "command line"
            case .environment(let name): "environment \(name)"
            case .file(let path, let line): "\(path):\(line)"
            }
        }
    }

    struct Resolved: Sendable, Equatable {
        var option: String
        var values: [String]
        var source: Source
    }

    static let layeredCommands: Set<String> = ["serve", "gateway", "advertise"]
    static let environmentPrefix = "PROXIMA_"
    /// Variables the commands read themselves rather than through an option.
    static let readDirectly: Set<String> = ["PROXIMA_CONFIG_FILE", "PROXIMA_CONFIG_DIR", "PROXIMA_ADMIN_TOKEN", "PROXIMA_GATEWAY_TOKEN"]

    var arguments: [String]
    var resolved: [Resolved]
    /// `PROXIMA_*` variables that name no option of this command (a typo, or another command's).
    var unusedEnvironment: [String]
    var showConfiguration: Bool

    static func environmentName(of option: String) -> String {
        environmentPrefix + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Resolves the layers for `arguments` (without the program name). Commands other than the
    /// layered ones are returned untouched.
    static func resolve(_ arguments: [String], environment: [String: String],
                        options catalogue: (String) -> CommandOptions?) throws -> LayeredArguments {
        guard let command = arguments.first, layeredCommands.contains(command),
              let options = catalogue(command) else {
            return LayeredArguments(arguments: arguments, resolved: [], unusedEnvironment: [], showConfiguration: false)
        }
        var given = Array(arguments.dropFirst())
        let showConfiguration = given.contains("--show-config")
        given.removeAll { $0 == "--show-config" }
        let filePath = try takeValue(of: "--config-file", from: &given) ?? environment["PROXIMA_CONFIG_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let file = try filePath.map(ConfigurationFile.load(path:))

        var resolved: [Resolved] = []
        var added: [String] = []
        for option in options.options.values.sorted(by: { $0.name < $1.name }) {
            if options.isGiven(option, in: given) {
                resolved.append(Resolved(option: option.name, values: options.values(of: option, in: given), source: .commandLine))
                continue
            }
            let variable = environmentName(of: option.name)
            if let value = environment[variable] {
                added += try commandLine(for: option, values: [value], source: .environment(variable))
                resolved.append(Resolved(option: option.name, values: [value], source: .environment(variable)))
                continue
            }
            let entries = file?.entries(for: command).filter { $0.name == option.name } ?? []
            guard let first = entries.first, let file else { continue }
            if !option.repeats, entries.count > 1 {
                throw ConfigurationError(path: file.path, line: entries[1].line, "'\(option.name)' is given twice in [\(command)] (first on line \(first.line)); it takes one value")
            }
            added += try commandLine(for: option, values: entries.map(\.value), source: .file(file.path, line: first.line))
            resolved.append(Resolved(option: option.name, values: entries.map(\.value), source: .file(file.path, line: first.line)))
        }
        if let file {
            for entry in file.entries(for: command) where options.options[entry.name] == nil {
                let known = options.options.keys.sorted().joined(separator: ", ")
                throw ConfigurationError(path: file.path, line: entry.line, "'\(entry.name)' is not an option of proxima \(command) (its options: \(known))")
            }
            for section in file.sections.keys where !layeredCommands.contains(section) {
                let line = file.sections[section]?.first?.line
                throw ConfigurationError(path: file.path, line: line, "section [\(section)] is not one of [serve], [gateway], [advertise]")
            }
        }
        let known = Set(options.options.keys.map(environmentName(of:))).union(readDirectly)
        let unused = environment.keys.filter { $0.hasPrefix(environmentPrefix) && !known.contains($0) }.sorted()
        // The layered values go first, so anything the parser reports about the user's own
        // arguments keeps its place.
        return LayeredArguments(arguments: [command] + added + given, resolved: resolved,
                                unusedEnvironment: unused, showConfiguration: showConfiguration)
    }

    private static func commandLine(for option: CommandOptions.Option, values: [String], source: Source) throws -> [String] {
        switch option.kind {
        case .option:
            return values.map { "--\(option.name)=\($0)" }
        case .flag:
            var result: [String] = []
            for value in values {
                switch value.lowercased() {
                case "true", "yes", "on", "1": result.append("--\(option.name)")
                case "false", "no", "off", "0":
                    if option.spellings.contains("--no-\(option.name)") { result.append("--no-\(option.name)") }
                default:
                    throw ConfigurationError(path: "\(source)", line: nil, "'\(option.name)' is a flag: true or false, found '\(value.prefix(40))'")
                }
            }
            return result
        }
    }

    /// Removes `--name value` or `--name=value` from the arguments and returns the value.
    private static func takeValue(of name: String, from arguments: inout [String]) throws -> String? {
        guard let index = arguments.firstIndex(where: { $0 == name || $0.hasPrefix(name + "=") }),
              arguments[..<index].contains("--") == false else { return nil }
        if arguments[index].hasPrefix(name + "=") {
            let value = String(arguments[index].dropFirst(name.count + 1))
            arguments.remove(at: index)
            return value
        }
        guard index + 1 < arguments.count else {
            throw ConfigurationError(path: name, line: nil, "needs a path")
        }
        let value = arguments[index + 1]
        arguments.removeSubrange(index...index + 1)
        return value
    }

    /// For an error message that names options, where each of those options came from when it
    /// was not typed on the command line.
    func provenance(mentionedIn message: String) -> [String] {
        resolved.compactMap { item in
            guard item.source != .commandLine, message.contains("--\(item.option)") else { return nil }
            return "--\(item.option) came from \(item.source)"
        }
    }

    /// What `--show-config` prints: each option that has a value, and where it came from, with
    /// secrets masked.
    func report() -> String {
        var lines = resolved.map { item -> String in
            let shown = item.values.map { Self.masked(option: item.option, value: $0) }
            let values = shown.isEmpty ? "" : " = " + shown.joined(separator: ", ")
            return "\(item.option)\(values)  (\(item.source))"
        }
        if !unusedEnvironment.isEmpty {
            lines.append("ignored environment (no such option here): " + unusedEnvironment.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static func masked(option: String, value: String) -> String {
        let secretWords = ["token", "key", "password", "secret"]
        if secretWords.contains(where: option.contains) { return "********" }
        // A database URL's password.
        if let at = value.firstIndex(of: "@"), let scheme = value.range(of: "://"),
           let colon = value[scheme.upperBound..<at].firstIndex(of: ":") {
            return String(value[..<value.index(after: colon)]) + "********" + String(value[at...])
        }
        return value
    }
}
