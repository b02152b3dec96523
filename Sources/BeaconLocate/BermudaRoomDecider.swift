import Foundation

/// Bermuda (a Home Assistant integration, 0.8): the area of the nearest Bluetooth proxy by
/// filtered distance, with its hysteresis.
///
/// The rule, as Bermuda 0.8.7 documents and ships it (defaults in brackets):
/// - **Update cycle** every 1.05 s: each proxy's latest packet of the beacon since the last cycle
///   is a new reading; distance = `10^((ref_power − rssi) / (10 · attenuation))` [ref_power
///   −55 dBm, attenuation 3].
/// - **Distance filter** per proxy: a reading that implies moving away faster than 3 m/s
///   [max_velocity] repeats the previous one; the filtered distance is the mean over the last
///   20 cycles [smoothing_samples] of the running minimum (newest first), or the new reading when
///   that is nearer — it comes closer at once and recedes slowly. A proxy silent for 30 s has
///   no distance.
/// - **Area contest** each cycle: the current proxy is the incumbent; a challenger must have
///   heard the beacon within 10 s, be within 20 m [max_area_radius] and be nearer. It wins when
///   the incumbent has no distance; or it is in the same area with a fresher packet; or, with
///   more than 3 cycles of history, its farthest of the last 5 is nearer than the incumbent's
///   nearest and it is ≥ 15 % nearer; or it is ≥ 30 % nearer outright. Challengers are taken in
///   the order the proxies first heard the beacon, each against the winner so far.
/// - **Away**: no area once the incumbent has no distance and no challenger qualifies.
public struct BermudaRoomDecider: PacketRoomDecider {
    public struct Configuration: Sendable, Hashable {
        public var updateInterval = 1.05
        public var referencePower = -55.0
        public var attenuation = 3.0
        public var maxVelocity = 3.0
        public var smoothingSamples = 20
        public var distanceTimeout = 30.0
        public var maxAdvertAge = 10.0
        public var maxRadius = 20.0
        public var historyKept = 10
        public var minimumHistory = 3
        public var historyWindow = 5
        public var outrightDifference = 0.30
        public var historicalDifference = 0.15

        public init() {}
    }

    /// A proxy's record of one beacon (Bermuda's "advert").
    struct Advert: Sendable {
        let receiver: String
        let area: String
        var latest: (time: Double, rssi: Double)?
        var stamp = -Double.infinity
        var raw = Double.infinity
        var distance: Double?
        /// Newest first.
        var rawHistory: [Double] = []
        var stampHistory: [Double] = []
        var intervalHistory: [Double] = []
    }

    struct Subject: Sendable {
        var adverts: [Advert] = []
        var incumbent: Int?
        var area: String?
    }

    public let configuration: Configuration
    public let receiverRooms: [String: String]
    private var subjects: [String: Subject] = [:]
    private var nextCycle: Double?
    private var lastPacket = -Double.infinity

    public init(receiverRooms: [String: String], configuration: Configuration = Configuration()) {
        self.receiverRooms = receiverRooms
        self.configuration = configuration
    }

    public func room(of subject: String) -> String? { subjects[subject]?.area }

    public mutating func observe(subject name: String, receiver: String, rssi: Double, measuredPower: Double, at time: Double) -> [RoomEvent] {
        guard let area = receiverRooms[receiver], rssi.isFinite, time.isFinite else { return [] }
        let events = advance(to: time)
        if subjects[name] == nil && subjects.count >= RoomPresence.maximumSubjects { return events }
        var subject = subjects[name] ?? Subject()
        let index = subject.adverts.firstIndex { $0.receiver == receiver } ?? {
            subject.adverts.append(Advert(receiver: receiver, area: area))
            return subject.adverts.count - 1
        }()
        subject.adverts[index].latest = (time, rssi)
        lastPacket = max(lastPacket, time)
        subjects[name] = subject
        if nextCycle == nil { nextCycle = time + configuration.updateInterval }
        return events
    }

    public mutating func advance(to time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        // After a silence longer than every timeout, more cycles change nothing: skip ahead so
        // that a jump in time costs a bounded number of cycles.
        let idle = ((configuration.distanceTimeout + configuration.maxAdvertAge) / configuration.updateInterval).rounded(.up) + 2
        while var cycle = nextCycle, cycle <= time {
            if cycle > lastPacket + idle * configuration.updateInterval && time - cycle > configuration.updateInterval {
                cycle += ((time - cycle) / configuration.updateInterval).rounded(.down) * configuration.updateInterval
            }
            for name in subjects.keys.sorted() {
                guard var subject = subjects[name] else { continue }
                for index in subject.adverts.indices { update(&subject.adverts[index], at: cycle) }
                let winner = contest(subject, at: cycle)
                subject.incumbent = winner
                let area = winner.flatMap { subject.adverts[$0].distance != nil ? subject.adverts[$0].area : nil }
                events += RoomEvent.change(subject: name, from: subject.area, to: area, at: cycle)
                subject.area = area
                subjects[name] = subject
            }
            nextCycle = cycle + configuration.updateInterval
        }
        return events
    }

    /// One cycle of one proxy's distance filter.
    private func update(_ advert: inout Advert, at now: Double) {
        let fresh = advert.latest.map { $0.time > advert.stamp } ?? false
        if fresh, let latest = advert.latest {
            advert.stamp = latest.time
            advert.raw = logDistance(rssi: latest.rssi, reference: configuration.referencePower, exponent: configuration.attenuation)
            advert.rawHistory.insert(advert.raw, at: 0)
            advert.stampHistory.insert(advert.stamp, at: 0)
        }
        if advert.distance == nil && fresh {
            advert.distance = advert.raw
            advert.intervalHistory = [advert.raw]
        } else if !fresh && advert.stamp < now - configuration.distanceTimeout {
            advert.distance = nil
            advert.intervalHistory = []
        } else {
            let reading = recedesTooFast(advert) ? (advert.intervalHistory.first ?? advert.raw) : advert.raw
            advert.intervalHistory.insert(reading, at: 0)
            if advert.intervalHistory.count > configuration.smoothingSamples { advert.intervalHistory.removeLast(advert.intervalHistory.count - configuration.smoothingSamples) }
            var runningMinimum = advert.raw, total = 0.0
            for distance in advert.intervalHistory {
                runningMinimum = min(runningMinimum, distance)
                total += runningMinimum
            }
            let mean = total / Double(advert.intervalHistory.count)
            advert.distance = min(mean, advert.raw)
        }
        if advert.rawHistory.count > configuration.historyKept { advert.rawHistory.removeLast(advert.rawHistory.count - configuration.historyKept) }
        if advert.stampHistory.count > configuration.historyKept { advert.stampHistory.removeLast(advert.stampHistory.count - configuration.historyKept) }
    }

    /// Whether the newest reading implies moving away faster than `maxVelocity`: the speed from
    /// the previous reading, or, if that was not an approach, the fastest retreat from any older one.
    private func recedesTooFast(_ advert: Advert) -> Bool {
        let distances = advert.rawHistory, stamps = advert.stampHistory
        guard distances.count > 1, stamps.count > 1 else { return false }
        var peak = 0.0
        if stamps[0] - stamps[1] > 0 { peak = (distances[0] - distances[1]) / (stamps[0] - stamps[1]) }
        if peak >= 0 {
            for (distance, stamp) in zip(distances.dropFirst(2), stamps.dropFirst(2)) where stamps[0] - stamp > 0 {
                peak = max(peak, (distances[0] - distance) / (stamps[0] - stamp))
            }
        }
        return peak > configuration.maxVelocity
    }

    /// The area contest: the index of the winning advert (the incumbent when none beats it).
    private func contest(_ subject: Subject, at now: Double) -> Int? {
        var incumbent = subject.incumbent
        for (index, challenger) in subject.adverts.enumerated() where index != incumbent {
            guard challenger.stamp >= now - configuration.maxAdvertAge, let distance = challenger.distance,
                  distance <= configuration.maxRadius else { continue }
            guard let current = incumbent, let currentDistance = subject.adverts[current].distance else {
                incumbent = index
                continue
            }
            let held = subject.adverts[current]
            guard distance <= currentDistance else { continue }
            let difference = abs(distance - currentDistance) / ((distance + currentDistance) / 2)
            if held.area == challenger.area && now - held.stamp > now - challenger.stamp + 1 {
                incumbent = index
                continue
            }
            if challenger.intervalHistory.count > configuration.minimumHistory,
               let heldNearest = held.intervalHistory.prefix(configuration.historyWindow).min(),
               let challengerFarthest = challenger.intervalHistory.prefix(configuration.historyWindow).max(),
               challengerFarthest < heldNearest && difference > configuration.historicalDifference {
                incumbent = index
                continue
            }
            if difference >= configuration.outrightDifference { incumbent = index }
        }
        return incumbent
    }
}
