import ArgumentParser
import BeaconHCI

/// The controller a command talks to: the transmitting commands use it alone, the scanning
/// ones as part of ``SourceOptions``.
struct ControllerOptions: ParsableArguments {
    @Option(help: "Linux HCI device, e.g. hci0.")
    var device: String?

    @Option(help: "H4 controller on a unix stream socket, e.g. /tmp/bt-server-le.")
    var h4: String?

    @Option(help: "H4 controller on a serial device, DEV[@BAUD][,noflow] (default 1000000 baud, RTS/CTS on), e.g. /dev/ttyACM0@1000000.")
    var serial: String?

    func validate() throws {
        if [device, h4, serial].compactMap({ $0 }).count > 1 {
            throw ValidationError("choose one controller: --device, --h4 or --serial")
        }
        _ = try endpointIfGiven()
    }

    func endpointIfGiven() throws -> ControllerEndpoint? {
        try controllerEndpoint(device: device, h4: h4, serial: serial)
    }

    /// The chosen controller; hci0 when none is named.
    func endpoint() throws -> ControllerEndpoint {
        try endpointIfGiven() ?? .device(index: 0)
    }
}

func controllerEndpoint(device: String?, h4: String?, serial: String?) throws -> ControllerEndpoint? {
    do {
        if let device { return try ControllerEndpoint.parseDevice(device) }
        if let h4 { return .h4Socket(path: h4) }
        if let serial { return try ControllerEndpoint.parseSerial(serial) }
    } catch {
        throw ValidationError(error.description)
    }
    return nil
}
