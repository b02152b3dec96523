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
/// last heard and its recent RSSI (``RecentSignal``), at most `limit` of them, and strikes
/// against it for each check.
struct ReceiverHearing: Sendable {
    static let limit = 32

    /// Start of the current run of sightings without a gap longer than `gap`: a phone that
    /// comes back after a silence is judged only once it has listened a full window again.
    private(set) var listeningSince: Double
    private var latest: Double
    private(set) var beacons: [BeaconIdentity: RecentSignal] = [:]
    var strikes = StrikeCounter()
    /// Strikes of the place check, per beacon named (one conflict names either of two).
    private var placeStrikes: [BeaconIdentity: StrikeCounter] = [:]

    init(at time: Double) {
        listeningSince = time
        latest = time
    }

    var count: Int { beacons.count }

    /// Records a sighting; returns the beacon's recent signal after it.
    @discardableResult
    mutating func heard(_ identity: BeaconIdentity, rssi: Int8?, at time: Double, receiverTime: Double, gap: Double) -> RecentSignal {
        if time - latest > gap { listeningSince = time }
        latest = Swift.max(latest, time)
        if beacons[identity] == nil, beacons.count >= Self.limit,
           let oldest = beacons.min(by: { $0.value.lastHeard < $1.value.lastHeard })?.key {
            beacons.removeValue(forKey: oldest)
        }
        var signal = beacons[identity] ?? RecentSignal()
        signal.add(rssi: rssi, at: time, receiverTime: receiverTime)
        beacons[identity] = signal
        return signal
    }

    /// Records a place-check strike against `identity`; true once enough fall in the window.
    mutating func placeStrike(against identity: BeaconIdentity, at time: Double, limit: Int, window: Double) -> Bool {
        // Only beacons the phone still remembers keep strikes, so these stay within `limit` too.
        if placeStrikes.count >= Self.limit { placeStrikes = placeStrikes.filter { beacons[$0.key] != nil } }
        return placeStrikes[identity, default: StrikeCounter()].strike(at: time, limit: limit, window: window)
    }

    /// Whether any of `identities` was heard at or after `since`.
    func heardAny(of identities: [NeighbourIndex.Neighbour], since: Double) -> Bool {
        identities.contains { (beacons[$0.identity]?.lastHeard ?? -.infinity) >= since }
    }
}

/// The last few RSSI readings of one beacon at one phone, for the median over a short window.
struct RecentSignal: Sendable {
    static let capacity = 8
    private(set) var lastHeard = -Double.infinity
    private var times: [Double] = []
    private var levels: [Int8] = []
    private var next = 0

    /// `time` is the server's (for the neighbour window), `receiverTime` the phone's own: the
    /// median compares readings of one phone, which its batches deliver seconds late together.
    mutating func add(rssi: Int8?, at time: Double, receiverTime: Double) {
        lastHeard = Swift.max(lastHeard, time)
        guard let rssi else { return }
        let time = receiverTime
        if times.count < Self.capacity {
            times.append(time)
            levels.append(rssi)
        } else {
            times[next] = time
            levels[next] = rssi
            next = (next + 1) % Self.capacity
        }
    }

    /// The median RSSI of the readings the phone stamped at or after `since`; nil with fewer
    /// than `minimum`.
    func median(since: Double, minimum: Int) -> Double? {
        withUnsafeTemporaryAllocation(of: Int8.self, capacity: Self.capacity) { window -> Double? in
            var count = 0
            for (time, level) in zip(times, levels) where time >= since {
                // Insertion sort: at most eight readings.
                var slot = count
                while slot > 0, window[slot - 1] > level {
                    window[slot] = window[slot - 1]
                    slot -= 1
                }
                window[slot] = level
                count += 1
            }
            guard count >= Swift.max(1, minimum) else { return nil }
            let middle = count / 2
            return count % 2 == 1 ? Double(window[middle]) : (Double(window[middle - 1]) + Double(window[middle])) / 2
        }
    }
}
