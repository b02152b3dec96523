import BeaconKit

/// How to scan: passive by default, duplicate filtering off so every packet's RSSI arrives.
public struct ScanSettings: Sendable, Hashable {
    public var active: Bool
    public var interval: LEInterval
    public var window: LEInterval
    public var filterDuplicates: Bool

    /// Window equal to the interval: the radio listens all the time.
    public init(active: Bool = false, interval: LEInterval = LEInterval(units: 0x0010),
                window: LEInterval = LEInterval(units: 0x0010), filterDuplicates: Bool = false) {
        self.active = active
        self.interval = interval
        self.window = window
        self.filterDuplicates = filterDuplicates
    }
}

/// A running LE scan on one controller. Read `sightings`; call `stop()` to disable scanning and
/// release the controller. The stream finishes with the link's error when the controller goes
/// away.
public final class ScanSession: Sendable {
    public let controller: HostController
    public let sightings: AsyncThrowingStream<Sighting, any Error>
    private let pump: Task<Void, Never>

    private init(controller: HostController, sightings: AsyncThrowingStream<Sighting, any Error>, pump: Task<Void, Never>) {
        self.controller = controller
        self.sightings = sightings
        self.pump = pump
    }

    /// The commands that start a scan, in order.
    public static func startCommands(_ settings: ScanSettings) -> [HCICommand] {
        [LECommand.setScanEnable(false),
         LECommand.setScanParameters(active: settings.active, interval: settings.interval, window: settings.window),
         LECommand.setScanEnable(true, filterDuplicates: settings.filterDuplicates)]
    }

    /// Resets and prepares the controller, then starts scanning. Events are subscribed before
    /// scanning is enabled, so the first report is not lost.
    public static func start(controller: HostController, settings: ScanSettings = ScanSettings(),
                             onMalformed: (@Sendable (DecodeError) -> Void)? = nil) async throws -> ScanSession {
        try await controller.prepareForLE()
        let events = await controller.events()
        let decoder = SightingDecoder(receiver: controller.transport.name)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Sighting.self)
        let pump = Task {
            do {
                for try await packet in events {
                    let outcome = decoder.decode(packet)
                    for error in outcome.malformed { onMalformed?(error) }
                    for sighting in outcome.sightings { continuation.yield(sighting) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        do {
            for command in startCommands(settings) {
                // Disabling a scan that is not running may be refused; that is fine.
                if command == LECommand.setScanEnable(false) {
                    _ = try? await controller.send(command)
                } else {
                    try await controller.send(command)
                }
            }
        } catch {
            pump.cancel()
            continuation.finish(throwing: error)
            throw error
        }
        return ScanSession(controller: controller, sightings: stream, pump: pump)
    }

    /// Disables scanning, then closes the link.
    public func stop() async throws {
        defer { pump.cancel() }
        do {
            try await controller.send(LECommand.setScanEnable(false))
        } catch {
            await controller.close()
            throw error
        }
        await controller.close()
    }
}

extension HostController {
    /// Reset, then the event masks that let LE Meta events through (Reset clears them).
    public static let preparationCommands: [HCICommand] = [
        HCICommand(opcode: .reset), LECommand.setEventMaskWithLEMeta(), LECommand.setLEEventMask(),
    ]

    /// Sends `preparationCommands`. Reset gets a longer timeout: some UART controllers take a
    /// while to answer it. On a raw channel the kernel owns the controller's setup (and has
    /// LE Meta events on), so nothing is sent.
    public func prepareForLE() async throws {
        guard !transport.isSharedWithKernel else { return }
        for command in Self.preparationCommands {
            try await send(command, timeout: command.opcode == .reset ? max(defaultTimeout, .seconds(5)) : nil)
        }
    }
}
