import BeaconHCI
import BeaconKit
import BeaconSimulator
import Foundation

/// Where `proxima help-request` advertises the visitor's help beacon: an HCI controller (as
/// `proxima advertise` does), or the simulator through a transmitter file a scenario's
/// `advertisers` entry names.
protocol HelpBeaconTransmitter: Sendable {
    /// Starts advertising; returns a line saying where.
    func start(_ frame: IBeaconFrame) async throws -> String
    /// Stops advertising; safe to call when it never started.
    func stop() async
}

/// A controller reached by `--device`, `--h4` or `--serial`.
actor ControllerHelpTransmitter: HelpBeaconTransmitter {
    let endpoint: ControllerEndpoint
    private var host: HostController?

    init(endpoint: ControllerEndpoint) {
        self.endpoint = endpoint
    }

    func start(_ frame: IBeaconFrame) async throws -> String {
        let transport = try endpoint.open()
        let host = HostController(transport: transport)
        do {
            try await host.prepareForLE()
            try await BeaconAdvertiser.start(frame, interval: BeaconAdvertiser.defaultInterval, on: host) { _ in }
        } catch {
            await host.close()
            throw error
        }
        self.host = host
        return "advertising on \(endpoint)"
    }

    func stop() async {
        guard let host else { return }
        self.host = nil
        try? await BeaconAdvertiser.stop(on: host)
        await host.close()
    }
}

/// The simulator's side: the frame is written to a file while advertising and the file is
/// removed when it stops (see `SimulatedTransmitterFile`).
struct SimulatedHelpTransmitter: HelpBeaconTransmitter {
    let url: URL

    func start(_ frame: IBeaconFrame) async throws -> String {
        try SimulatedTransmitterFile(frame: frame).write(to: url)
        return "advertising on the simulator (transmitter file \(url.path))"
    }

    func stop() async {
        try? FileManager.default.removeItem(at: url)
    }
}
