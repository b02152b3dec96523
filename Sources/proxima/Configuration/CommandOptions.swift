import ArgumentParser
import Foundation

/// The long options a command declares, read from argument-parser's own description of the
/// tool, so options added to a command are configurable from a file or the environment with no
/// second list to keep in step.
struct CommandOptions: Sendable {
    enum Kind: Sendable, Equatable { case option, flag }

    struct Option: Sendable, Equatable {
        var name: String
        var kind: Kind
        var repeats: Bool
        /// Every spelling on a command line: `--name`, `-n`, and `--no-name` for an inverted flag.
        var spellings: [String]
    }

    var command: String
    var options: [String: Option]

    /// Options that only steer this layering or the parser, never taken from a file or the
    /// environment.
    static let reserved: Set<String> = ["help", "config-file", "show-config", "version"]

    static func of(_ command: String, in tool: any ParsableCommand.Type) -> CommandOptions? {
        guard let data = tool._dumpHelp().data(using: .utf8),
              let description = try? JSONDecoder().decode(ToolDescription.self, from: data),
              let found = description.command.subcommands?.first(where: { $0.commandName == command })
        else { return nil }
        var options: [String: Option] = [:]
        for argument in found.arguments ?? [] where argument.kind != "positional" {
            let names = argument.names ?? []
            let preferredLong = argument.preferredName?.kind == "long" ? argument.preferredName?.name : nil
            guard let long = preferredLong ?? names.first(where: { $0.kind == "long" })?.name,
                  !reserved.contains(long) else { continue }
            let spellings = names.map { $0.kind == "short" ? "-\($0.name)" : ($0.kind == "long" ? "--\($0.name)" : "-\($0.name)") }
            options[long] = Option(name: long, kind: argument.kind == "flag" ? .flag : .option,
                                   repeats: argument.isRepeating ?? false, spellings: spellings)
        }
        return CommandOptions(command: command, options: options)
    }

    /// Whether the command line already gives this option, in any spelling (`--name value`,
    /// `--name=value`, `-n`).
    func isGiven(_ option: Option, in arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            for spelling in option.spellings where argument == spelling || argument.hasPrefix(spelling + "=") {
                return true
            }
        }
        return false
    }

    /// The values the command line gives an option (none for a flag).
    func values(of option: Option, in arguments: [String]) -> [String] {
        guard option.kind == .option else { return [] }
        var values: [String] = []
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            for spelling in option.spellings {
                if argument.hasPrefix(spelling + "=") {
                    values.append(String(argument.dropFirst(spelling.count + 1)))
                } else if argument == spelling, index + 1 < arguments.count {
                    values.append(arguments[index + 1])
                    index += 1
                }
            }
            index += 1
        }
        return values
    }

    // The subset of argument-parser's `--experimental-dump-help` schema read here.
    private struct ToolDescription: Decodable {
        var command: CommandDescription
    }

    private struct CommandDescription: Decodable {
        var commandName: String
        var subcommands: [CommandDescription]?
        var arguments: [ArgumentDescription]?
    }

    private struct ArgumentDescription: Decodable {
        var kind: String
        var names: [NameDescription]?
        var preferredName: NameDescription?
        var isRepeating: Bool?
    }

    private struct NameDescription: Decodable {
        var kind: String
        var name: String
    }
}
