/// Something ``BeaconManager/run(_:monitoring:ranging:receiver:clock:notices:)`` tells its
/// caller about the source while it runs, for a person to read.
public enum EngineRunNotice: Sendable, Hashable, CustomStringConvertible {
    /// A sighting came from a receiver other than the one followed; that receiver's sightings
    /// (and any further ones) are left out.
    case severalReceivers(following: String, ignoring: String)

    public var description: String {
        switch self {
        case .severalReceivers(let followed, _):
            "this source has several receivers; following \"\(followed)\" (choose one with --receiver NAME)"
        }
    }
}

extension BeaconManager {
    /// Drives the engine from a source until the source ends, then ends ``events``.
    ///
    /// - One engine models one receiver: mixing several receivers' packets would make every
    ///   beacon look near to someone. Only `receiver`'s sightings are used; when it is nil, the
    ///   first receiver heard is followed and ``EngineRunNotice/severalReceivers(following:ignoring:)``
    ///   is reported once if another one is heard.
    /// - A live source is stamped by the wall clock, so time moves on once a second from
    ///   `clock` between packets: a beacon that falls silent exits without another packet.
    /// - A recorded source (capture, simulation) carries its own time: when it ends, time moves
    ///   on by ``settlingTime`` past its last sighting, so pending exits and the last ranging
    ///   cycles are reported.
    public func run(_ source: SightingSource, monitoring: [BeaconRegion] = [], ranging: [BeaconRegion] = [],
                    receiver: String? = nil, clock: some WallClock = SystemWallClock(),
                    notices: @escaping @Sendable (EngineRunNotice) -> Void = { _ in }) async throws {
        let live = source.timing == .live
        do {
            for region in monitoring { try startMonitoring(region, at: live ? clock.now() : nil) }
        } catch {
            finish()
            throw error
        }
        for region in ranging { startRanging(region) }
        let ticker: Task<Void, Never>? = live ? Task {
            while true {
                do { try await clock.sleep(seconds: 1) } catch { return }
                self.advance(to: clock.now())
            }
        } : nil
        defer {
            ticker?.cancel()
            finish()
        }
        var filter = ReceiverFilter(chosen: receiver)
        var last: Double?
        for try await sighting in source.sightings {
            let (accepted, notice) = filter.admit(sighting.receiver)
            if let notice { notices(notice) }
            guard accepted else { continue }
            receive(sighting)
            last = sighting.time
        }
        if !live, let last { advance(to: last + settlingTime) }
    }
}

/// Which receiver's sightings an engine takes: the chosen one, or the first one heard.
struct ReceiverFilter {
    private let chosen: String?
    private var followed: String?
    private var noticed = false

    init(chosen: String?) {
        self.chosen = chosen
        followed = chosen
    }

    /// Whether to use a sighting from `receiver`, and a notice the first time another receiver
    /// is left out while following the first one heard.
    mutating func admit(_ receiver: String) -> (Bool, EngineRunNotice?) {
        guard let followed else {
            followed = receiver
            return (true, nil)
        }
        if receiver == followed { return (true, nil) }
        guard chosen == nil, !noticed else { return (false, nil) }
        noticed = true
        return (false, .severalReceivers(following: followed, ignoring: receiver))
    }
}
