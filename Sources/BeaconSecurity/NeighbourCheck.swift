import BeaconKit
import Foundation

/// For each fixed beacon, the fixed beacons a receiver at its place would hear: its registered
/// neighbours. Built once per site from the positions and measured powers, so a sighting costs a
/// dictionary lookup.
struct NeighbourIndex: Sendable {
    struct Neighbour: Sendable, Hashable {
        var identity: BeaconIdentity
        var name: String
        var distance: Double
    }

    private(set) var neighbours: [BeaconIdentity: [Neighbour]] = [:]

    init(site: SecuritySite) {
        let settings = site.settings
        let fixed = site.beacons.compactMap { identity, beacon in beacon.position.map { (identity, beacon, $0) } }
        // Quadratic in the site's fixed beacons, but only when the registry changes.
        for (identity, _, position) in fixed {
            var found: [Neighbour] = []
            for (other, beacon, otherPosition) in fixed where other != identity {
                let distance = position.distance(to: otherPosition)
                if distance <= settings.hearingRange(of: beacon.measuredPower) {
                    found.append(Neighbour(identity: other, name: beacon.name, distance: distance))
                }
            }
            found.sort { ($0.distance, $0.name) < ($1.distance, $1.name) }
            neighbours[identity] = Array(found.prefix(settings.neighbourLimit))
        }
    }
}

extension SecuritySettings {
    /// How far a beacon of this measured power is still heard at `neighbourHearingRSSI`, by the
    /// pessimistic `neighbourPathLossExponent`: a neighbour must be surely audible, not maybe.
    func hearingRange(of power: MeasuredPower) -> Double {
        pow(10, (Double(power.dBm) - neighbourHearingRSSI) / (10 * neighbourPathLossExponent))
    }
}

/// What one unplaced receiver (a phone) heard of the site's fixed beacons lately: when each was
/// last heard, at most `limit` of them, and strikes against it.
struct ReceiverHearing: Sendable {
    static let limit = 32

    /// Start of the current run of sightings without a gap longer than `gap`: a phone that
    /// comes back after a silence is judged only once it has listened a full window again.
    private(set) var listeningSince: Double
    private var latest: Double
    private var lastHeard: [BeaconIdentity: Double] = [:]
    var strikes = StrikeCounter()

    init(at time: Double) {
        listeningSince = time
        latest = time
    }

    var count: Int { lastHeard.count }

    mutating func heard(_ identity: BeaconIdentity, at time: Double, gap: Double) {
        if time - latest > gap { listeningSince = time }
        latest = Swift.max(latest, time)
        if lastHeard[identity] == nil, lastHeard.count >= Self.limit,
           let oldest = lastHeard.min(by: { $0.value < $1.value })?.key {
            lastHeard.removeValue(forKey: oldest)
        }
        lastHeard[identity] = Swift.max(lastHeard[identity] ?? time, time)
    }

    /// Whether any of `identities` was heard at or after `since`.
    func heardAny(of identities: [NeighbourIndex.Neighbour], since: Double) -> Bool {
        identities.contains { (lastHeard[$0.identity] ?? -.infinity) >= since }
    }
}
