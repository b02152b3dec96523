import ArgumentParser
import Foundation

@main
struct Proxima: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxima",
        abstract: "An iBeacon system for Linux: transmit, scan, monitor, range, simulate and serve.",
        subcommands: [
            Monitor.self,
            Range.self,
            Calibrate.self,
            Regions.self,
            Advertise.self,
            Transmitters.self,
            Scan.self,
            Simulate.self,
            Evaluate.self,
            SecurityEvaluate.self,
            Encode.self,
            Decode.self,
            NewUUID.self,
            ServeCommand.self,
            GatewayCommand.self,
            Locate.self,
            RouteCommand.self,
            FleetCommand.self,
            DeviceCommand.self,
            MessagesCommand.self,
            QueueCommand.self,
            CheckinCommand.self,
            HelpRequestCommand.self,
            HuntCommand.self,
            OffersCommand.self,
            PassCommand.self,
            SurveyCommand.self,
        ]
    )

    /// Layers the options file and `PROXIMA_*` variables under the command line before parsing.
    static func main() async {
        let layered: LayeredArguments
        do {
            layered = try LayeredArguments.resolve(Array(CommandLine.arguments.dropFirst()),
                                                   environment: ProcessInfo.processInfo.environment,
                                                   options: { CommandOptions.of($0, in: Proxima.self) })
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            Foundation.exit(64)
        }
        if layered.showConfiguration {
            print(layered.report())
            return
        }
        do {
            var command = try parseAsRoot(layered.arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // A value from a file or the environment is refused by the same parser as a typed
            // one; say where it came from, since the user did not type it.
            for note in layered.provenance(mentionedIn: fullMessage(for: error)) {
                FileHandle.standardError.write(Data("Note: \(note)\n".utf8))
            }
            exit(withError: error)
        }
    }
}
