import ArgumentParser
import BeaconHCI
import BeaconKit
import BeaconRotation
import Foundation
import Synchronization

struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Transmit as an iBeacon until interrupted (SIGINT or SIGTERM disables advertising first).")

    @OptionGroup var configurationFile: ConfigurationFileOptions

    @Option(help: "Proximity UUID.")
    var uuid: String?

    @Option(help: "Major, 0…65535.")
    var major: Int?

    @Option(help: "Minor, 0…65535.")
    var minor: Int?

    @Option(parsing: .unconditional, help: "Measured power: RSSI at 1 m in dBm.")
    var power: Int?

    @Option(help: "Advertising interval, 20ms…10240ms.")
    var interval: String = "100ms"

    @Option(help: "Advertise a saved transmitter (see `proxima transmitters`).")
    var config: String?

    @Option(help: "Record every HCI packet: FILE.pcap as pcap (link type 201), anything else as btsnoop.")
    var record: String?

    @Option(help: ArgumentHelp("Rotate major and minor every period, derived from this key (16 to 32 bytes as hex or base64; see docs/security.md). "
                               + "Keeps the UUID; --major and --minor are then not given. PROXIMA_ROTATION_KEY keeps it off the process list.",
                               valueName: "key"))
    var rotationKey: String?

    @Option(help: "Length of a rotation period: 24h (the default), 15m, 2d or seconds; at least 1m.")
    var rotationPeriod: String?

    @OptionGroup var controller: ControllerOptions

    func validate() throws {
        guard let parsed = LEInterval.parse(interval), (20...10_240).contains(parsed.milliseconds) else {
            throw ValidationError("--interval '\(interval)' must be between 20ms and 10240ms, e.g. 100ms")
        }
        if rotationKey != nil || rotationPeriod != nil {
            _ = try rotation(uuid: UUID())
            if major != nil || minor != nil {
                throw ValidationError("--rotation-key derives major and minor from the key for each period; drop --major/--minor")
            }
            if (config == nil) == (uuid == nil) {
                throw ValidationError("--rotation-key needs one of --uuid U or --config NAME for the proximity UUID it keeps")
            }
            return
        }
        if config == nil && (uuid == nil || major == nil || minor == nil) {
            throw ValidationError("give --uuid, --major and --minor, or --config NAME")
        }
        if config != nil && (uuid != nil || major != nil || minor != nil) {
            throw ValidationError("--config NAME takes the identity from the saved transmitter; drop --uuid/--major/--minor")
        }
    }

    /// The rotation the options ask for, around `uuid`; nil without --rotation-key.
    func rotation(uuid: UUID) throws -> RotatingIdentity? {
        guard let rotationKey else {
            if rotationPeriod != nil { throw ValidationError("--rotation-period needs --rotation-key") }
            return nil
        }
        do throws(RotationInputError) {
            let key = try RotationKey(parsing: rotationKey, field: "--rotation-key")
            var period = RotationPeriod.day
            if let rotationPeriod { period = try RotationPeriod(parsing: rotationPeriod, field: "--rotation-period") }
            return RotatingIdentity(uuid: uuid, key: key, period: period)
        } catch {
            throw ValidationError("\(error.field): \(error.reason)")
        }
    }

    /// The frame to start with: the saved or given identity, or this period's rotated one.
    func frame(at time: Double) throws -> (IBeaconFrame, RotatingIdentity?) {
        var frame = try self.frame()
        guard let rotating = try rotation(uuid: frame.identity.uuid) else { return (frame, nil) }
        frame.identity = rotating.identity(at: time)
        return (frame, rotating)
    }

    func frame() throws -> IBeaconFrame {
        if let config {
            var saved = try TransmitterStore().transmitter(named: config)
            guard saved.enabled else {
                throw ValidationError("transmitter '\(config)' is switched off; switch it on with `proxima transmitters on \(config)`")
            }
            if let power { saved.measuredPower = try BeaconIdentity.parseMeasuredPower(power) }
            return saved.frame
        }
        if rotationKey != nil {
            // Major and minor come from the key; the rotation fills them in.
            return IBeaconFrame(identity: BeaconIdentity(uuid: try BeaconIdentity.parseUUID(uuid ?? ""), major: 0, minor: 0),
                                measuredPower: try BeaconIdentity.parseMeasuredPower(power ?? -59))
        }
        let identity = BeaconIdentity(uuid: try BeaconIdentity.parseUUID(uuid ?? ""),
                                      major: try BeaconIdentity.parseNumber(major ?? 0, field: "major"),
                                      minor: try BeaconIdentity.parseNumber(minor ?? 0, field: "minor"))
        return IBeaconFrame(identity: identity, measuredPower: try BeaconIdentity.parseMeasuredPower(power ?? -59))
    }

    func run() async throws {
        let frame: IBeaconFrame, rotating: RotatingIdentity?
        do {
            (frame, rotating) = try self.frame(at: Date().timeIntervalSince1970)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
        let interval = LEInterval.parse(interval) ?? BeaconAdvertiser.defaultInterval
        let endpoint = try controller.endpoint()
        let signals = ProcessSignals.stream()
        let transport: FileDescriptorTransport
        do {
            transport = try endpoint.open()
        } catch {
            printError("\(error)")
            throw ExitCode.failure
        }
        do {
            try StandardOutput.line("Controller \(endpoint)\(transport.channelNote.map { " (\($0))" } ?? "")")
        } catch {
            transport.close()
            throw error
        }
        var writers: [any CaptureWriter] = []
        if let record {
            do {
                writers.append(try CaptureFileFormat(fileName: record).makeWriter(url: URL(fileURLWithPath: record)))
            } catch {
                transport.close()
                printError("cannot create \(record): \(error)")
                throw ExitCode.failure
            }
        }
        defer { for writer in writers { try? writer.close() } }
        let host = HostController(transport: transport, recorders: writers)
        let linkEvents = await host.events()
        // The progress callback cannot throw: it keeps the first failed write for after the start.
        let progressFailure = Mutex<StandardOutputError?>(nil)
        do {
            try StandardOutput.line(transport.isSharedWithKernel
                ? "Raw channel shared with the kernel: no Reset"
                : "Reset, then enable LE Meta events")
            try await host.prepareForLE()
            try await BeaconAdvertiser.start(frame, interval: interval, on: host) { step in
                do throws(StandardOutputError) { try StandardOutput.line(step.summary) } catch {
                    progressFailure.withLock { $0 = $0 ?? error }
                }
            }
        } catch let error as StandardOutputError {
            await host.close()
            throw error
        } catch {
            printError("\(error)")
            await host.close()
            throw ExitCode.failure
        }
        do {
            if let failure = progressFailure.withLock({ $0 }) { throw failure }
            try StandardOutput.line("Advertising iBeacon \(frame.identity.uuid.uuidString) major \(frame.identity.major) minor \(frame.identity.minor) "
                                    + "power \(frame.measuredPower.dBm) dBm every \(interval). Press Ctrl-C to stop.")
            if let rotating {
                try StandardOutput.line("Rotating major and minor every \(rotating.period) (period \(rotating.period.number(at: Date().timeIntervalSince1970)), "
                                        + "key \(rotating.key.fingerprint)); next change at \(Self.iso8601(rotating.nextChange(after: Date().timeIntervalSince1970))).")
            }
        } catch {
            try? await BeaconAdvertiser.stop(on: host)
            await host.close()
            throw error
        }

        let watcher = Task { () -> String? in
            do {
                for try await _ in linkEvents {}
                return nil
            } catch {
                return "\(error)"
            }
        }
        let stopper = Task { () -> Int32? in
            for await number in signals { return number }
            return nil
        }
        let outcome = await withTaskGroup(of: StopReason.self) { group in
            group.addTask { .signal(await stopper.value) }
            group.addTask { .link(await watcher.value) }
            if let rotating {
                group.addTask { .link(await Self.rotate(rotating, frame: frame, on: host)) }
            }
            let first = await group.next() ?? .signal(nil)
            group.cancelAll()
            watcher.cancel()
            stopper.cancel()
            return first
        }
        switch outcome {
        case .signal(let number):
            // Advertising is disabled whether or not the line about it could be written.
            let announced = Result { try StandardOutput.line("\(number.map(ProcessSignals.name) ?? "Stop") received: \(BeaconAdvertiser.stopStep.summary)") }
            do {
                try await BeaconAdvertiser.stop(on: host)
            } catch {
                printError("could not disable advertising: \(error)")
                await host.close()
                throw ExitCode.failure
            }
            await host.close()
            try announced.get()
            try StandardOutput.line("Advertising stopped.")
        case .link(let message):
            printError(message ?? "the controller link closed")
            await host.close()
            throw ExitCode.failure
        }
    }

    /// Changes the advertised major and minor at each period boundary until cancelled; returns
    /// why it stopped when the controller refused, nil when cancelled.
    static func rotate(_ rotating: RotatingIdentity, frame: IBeaconFrame, on host: HostController) async -> String? {
        var frame = frame
        while !Task.isCancelled {
            let now = Date().timeIntervalSince1970
            let change = rotating.nextChange(after: now)
            do {
                try await Task.sleep(for: .milliseconds(Int64(((change - now) * 1000).rounded(.up)) + 1))
            } catch {
                return nil
            }
            let next = rotating.identity(at: Date().timeIntervalSince1970)
            guard next != frame.identity else { continue }
            frame.identity = next
            do {
                try await BeaconAdvertiser.update(frame, on: host)
                try StandardOutput.line("Period \(rotating.period.number(at: Date().timeIntervalSince1970)): major \(next.major) minor \(next.minor)")
            } catch {
                return "could not change the rotated identity: \(error)"
            }
        }
        return nil
    }

    static func iso8601(_ time: Double) -> String {
        Date(timeIntervalSince1970: time).formatted(.iso8601)
    }

    enum StopReason: Sendable {
        case signal(Int32?)
        case link(String?)
    }
}
