import ArgumentParser

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
        ]
    )
}
