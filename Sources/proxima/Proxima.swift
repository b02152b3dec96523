import ArgumentParser

@main
struct Proxima: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxima",
        abstract: "An iBeacon system for Linux: transmit, scan, monitor, range, simulate and serve.",
        subcommands: [
            // Each issue adds its commands here.
            ServeCommand.self,
            GatewayCommand.self,
        ]
    )
}
