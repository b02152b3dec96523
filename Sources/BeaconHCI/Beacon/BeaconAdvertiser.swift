import BeaconKit

/// Makes a controller transmit as an iBeacon, the way the iBeacon book does it with hcitool,
/// and stops it again.
public enum BeaconAdvertiser {
    /// One step of the plan, with a line a person can read.
    public struct Step: Sendable, Hashable {
        public var summary: String
        public var command: HCICommand
    }

    /// Apple's recommendation and the book's default: every 100 ms.
    public static let defaultInterval = LEInterval(units: 0x00A0)

    /// Parameters (non-connectable, the interval, all three channels), data, enable. Advertising
    /// is switched off first, since parameters cannot change while it runs.
    public static func startSteps(_ frame: IBeaconFrame, interval: LEInterval = defaultInterval) -> [Step] {
        let data = frame.advertisingData()
        return [
            Step(summary: "LE Set Advertising Enable: off, so that the parameters can change",
                 command: LECommand.setAdvertisingEnable(false)),
            Step(summary: "LE Set Advertising Parameters: non-connectable (ADV_NONCONN_IND), every \(interval), channels 37, 38 and 39",
                 command: LECommand.setAdvertisingParameters(interval: interval)),
            Step(summary: "LE Set Advertising Data: \(hexBytes(data))",
                 command: LECommand.setAdvertisingData(data)),
            Step(summary: "LE Set Advertising Enable: on",
                 command: LECommand.setAdvertisingEnable(true)),
        ]
    }

    /// New advertising data while advertising runs: legacy advertising takes LE Set Advertising
    /// Data at any time, so a rotating identity changes without a gap on the air.
    public static func updateStep(_ frame: IBeaconFrame) -> Step {
        let data = frame.advertisingData()
        return Step(summary: "LE Set Advertising Data: \(hexBytes(data))", command: LECommand.setAdvertisingData(data))
    }

    public static func update(_ frame: IBeaconFrame, on controller: HostController) async throws {
        try await controller.send(updateStep(frame).command)
    }

    public static let stopStep = Step(summary: "LE Set Advertising Enable: off", command: LECommand.setAdvertisingEnable(false))

    /// Runs the plan. `progress` hears each step before it is sent.
    public static func start(_ frame: IBeaconFrame, interval: LEInterval = defaultInterval, on controller: HostController,
                             progress: @Sendable (Step) -> Void = { _ in }) async throws {
        let steps = startSteps(frame, interval: interval)
        for (index, step) in steps.enumerated() {
            progress(step)
            if index == 0 {
                // Refused with Command Disallowed by some controllers when not advertising.
                _ = try? await controller.send(step.command)
            } else {
                try await controller.send(step.command)
            }
        }
    }

    public static func stop(on controller: HostController) async throws {
        try await controller.send(stopStep.command)
    }
}
