import BeaconKit

/// An edge gateway's results between posts (`proxima gateway --edge`). Enters and exits go up
/// with the next batch; ranging readings alone wait until the oldest has been held
/// `readingInterval` seconds, because each post costs about 200 bytes of HTTP headers, more than
/// the readings of a few beacons. The server keeps only each beacon's latest reading
/// (`ranging_state`), so only the latest of each beacon is held: its events and final ranging
/// state are the same as when every step is posted, only the readings arrive later.
public struct EdgeSummaryHold: Sendable {
    public let settings: GatewaySettings
    public let readingInterval: Double
    private var changes: [GatewayMonitor.Change] = []
    private var readings: [GatewayMonitor.Reading] = []
    private var readingIndex: [BeaconIdentity: Int] = [:]
    private var sightings = 0
    private var heldSince: Double?

    public init(settings: GatewaySettings, readingInterval: Double) {
        self.settings = settings
        self.readingInterval = readingInterval
    }

    /// True while results wait for a later post.
    public var isHolding: Bool { heldSince != nil }

    /// Whether what is held should go up at `now` even without a new step.
    public func isDue(at now: Double) -> Bool {
        guard let heldSince else { return false }
        return !changes.isEmpty || now - heldSince >= readingInterval
    }

    /// Holds one step's results (a retry the engine saw before adds nothing).
    public mutating func add(_ outcome: GatewayMonitor.StepOutcome, sightings count: Int, now: Double) {
        guard !outcome.duplicate else { return }
        changes += outcome.changes
        for reading in outcome.readings {
            if let index = readingIndex[reading.identity] {
                readings[index] = reading
            } else {
                readingIndex[reading.identity] = readings.count
                readings.append(reading)
            }
        }
        sightings += count
        if heldSince == nil { heldSince = now }
    }

    /// Everything held as one batch under `sequence`, and the hold emptied.
    public mutating func take(sequence: Int) -> EdgeBatch {
        var merged = GatewayMonitor.StepOutcome(duplicate: false)
        merged.changes = changes
        merged.readings = readings
        let batch = EdgeBatch(sequence: sequence, settings: settings, sightings: sightings, outcome: merged)
        changes.removeAll(keepingCapacity: true)
        readings.removeAll(keepingCapacity: true)
        readingIndex.removeAll(keepingCapacity: true)
        sightings = 0
        heldSince = nil
        return batch
    }
}
