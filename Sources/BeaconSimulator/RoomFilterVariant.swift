import BeaconLocate

/// A room filter configuration the location evaluation runs: the methods whose fixes feed it
/// (those that gave a fix that cycle), the spread of their room likelihoods, and the filter's
/// rates and threshold.
struct RoomFilterVariant: Sendable, Hashable {
    var label: String
    var methods: [LocateMethod]
    var spread: Double
    var configuration: RoomFilter.Configuration

    /// The default decider, the same in both directions: the particle filter's, fingerprint's
    /// and trilateration's fixes, 0.5 m spread, belief 0.93 to announce a room. Chosen from a
    /// grid (spread 0.5–2.5 m, rate 0.05–1 /s, threshold 0.6–0.97, 1–2 confirming cycles,
    /// method sets) on examples/office.json; docs/evaluation.md has the figures.
    static let standard = RoomFilterVariant(label: LocationReport.defaultRoomDecider, methods: [.particle, .fingerprint, .trilateration],
                                            spread: 0.5, configuration: .init(switchRate: 0.5, threshold: 0.93))

    /// The default and, for comparison, a stricter threshold and a confirming second cycle.
    static let evaluated: [RoomFilterVariant] = {
        var stricter = standard
        stricter.label += ", threshold 0.97"
        stricter.configuration.threshold = 0.97
        var confirmed = standard
        confirmed.label += ", 2 cycles"
        confirmed.configuration.confirmations = 2
        return [standard, stricter, confirmed]
    }()
}
