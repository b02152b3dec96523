import ArgumentParser

/// The options of the layering itself. They are taken out of the arguments before parsing
/// (LayeredArguments); declaring them here puts them in `--help`.
struct ConfigurationFileOptions: ParsableArguments {
    @Option(name: .customLong("config-file"),
            help: "Options file with [serve], [gateway] and [advertise] sections (or PROXIMA_CONFIG_FILE). Command-line flags win, then PROXIMA_* variables, then the file.")
    var configFile: String?

    @Flag(name: .customLong("show-config"), help: "Print each option's value and where it came from (flag, environment, file:line), then exit.")
    var showConfig = false
}
