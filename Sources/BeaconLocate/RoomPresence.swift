import Foundation

/// A subject (a carried beacon, or a phone) entering or leaving a room.
public struct RoomEvent: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case enter, exit }
    public var subject: String
    public var room: String
    public var kind: Kind
    public var time: Double

    public init(subject: String, room: String, kind: Kind, time: Double) {
        self.subject = subject
        self.room = room
        self.kind = kind
        self.time = time
    }
}

/// Decides which room each subject is in from what every receiver hears, as a state machine
/// driven by sightings and the clock (no timers of its own).
///
/// Each receiver's RSSI for a subject is smoothed (exponentially, over time, not over packet
/// count). A room scores the best smoothed RSSI among its receivers, corrected by their gain
/// offsets. The subject moves to another room only when that room beats the current one by
/// `switchMargin` dB for `dwell` seconds without interruption: hysteresis in level and in time,
/// so it does not flap between neighbours. A receiver stops counting when it has not heard the
/// subject for several of the subject's own packet intervals (bounded by `absence`).
///
/// When no receiver counts any more the subject keeps its room through the silence until
/// ``silenceBound(of:)``: the silence a subject still present exceeds at most
/// `silenceFalseExitRate` times an hour, were its packets a Poisson stream at its own reception
/// rate (`T = m·ln(3600/(m·ε))`, m the smoothed gap between its packets on any receiver), never
/// less than `absence.lowerBound` nor more than `silenceCeiling`. A carried beacon in a pocket
/// is heard in bursts: its rate is low, its bound long, and it does not leave its room at every
/// pause. A subject heard again in another room in the meantime moves there directly (an exit
/// and an enter at the same time), never through "no room".
public struct RoomPresence: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// Time constant of the RSSI smoothing, seconds.
        public var smoothing: Double
        public var switchMargin: Double
        public var dwell: Double
        /// Bounds of the silence after which a receiver no longer counts, seconds. Within them
        /// the limit is `silentIntervals` times the typical gap between the subject's packets.
        public var absence: ClosedRange<Double>
        public var silentIntervals: Double
        /// ε of ``RoomPresence/silenceBound(of:)``: false exits per subject-hour allowed.
        public var silenceFalseExitRate: Double
        /// The longest silence a room is held through, seconds.
        public var silenceCeiling: Double

        public init(smoothing: Double = 2, switchMargin: Double = 4, dwell: Double = 1.5,
                    absence: ClosedRange<Double> = 6...15, silentIntervals: Double = 8,
                    silenceFalseExitRate: Double = 0.01, silenceCeiling: Double = 120) {
            self.silenceFalseExitRate = max(1e-9, silenceFalseExitRate)
            self.silenceCeiling = max(absence.lowerBound, silenceCeiling)
            self.smoothing = smoothing
            self.switchMargin = switchMargin
            self.dwell = dwell
            self.absence = absence
            self.silentIntervals = silentIntervals
        }
    }

    struct Link: Hashable, Sendable {
        var level: Double
        var lastHeard: Double
        var typicalGap: Double?
    }

    struct Subject: Hashable, Sendable {
        var links: [String: Link] = [:]
        var room: String?
        var candidate: String?
        var candidateSince: Double = 0
        /// The last packet from any receiver, and the smoothed gap between packets.
        var lastHeard: Double?
        var meanGap: Double?
        var gaps = 0
    }

    /// Weight of a new gap in a subject's smoothed gap (the first gaps are averaged equally).
    static let gapSmoothing = 0.02

    public let configuration: Configuration
    /// Receiver name → room name.
    public let receiverRooms: [String: String]
    public let receiverGain: [String: Double]
    private var subjects: [String: Subject] = [:]
    public static let maximumSubjects = 100_000

    public init(receiverRooms: [String: String], receiverGain: [String: Double] = [:], configuration: Configuration = Configuration()) {
        self.receiverRooms = receiverRooms
        self.receiverGain = receiverGain
        self.configuration = configuration
    }

    /// The rooms of a map's receivers (assigned, or where they stand).
    public init(map: SiteMap, receiverGain: [String: Double] = [:], configuration: Configuration = Configuration()) {
        var rooms: [String: String] = [:]
        for receiver in map.receivers { rooms[receiver.name] = map.room(ofReceiver: receiver.name) }
        self.init(receiverRooms: rooms, receiverGain: receiverGain, configuration: configuration)
    }

    public func room(of subject: String) -> String? { subjects[subject]?.room }

    /// One packet of `subject` heard by `receiver`. Receivers with no room are ignored.
    public mutating func observe(subject name: String, receiver: String, rssi: Double, at time: Double) -> [RoomEvent] {
        guard receiverRooms[receiver] != nil, rssi.isFinite else { return [] }
        if subjects[name] == nil && subjects.count >= Self.maximumSubjects { return [] }
        var subject = subjects[name] ?? Subject()
        if let last = subject.lastHeard {
            let gap = min(configuration.silenceCeiling, max(0, time - last))
            subject.gaps += 1
            let weight = max(Self.gapSmoothing, 1 / Double(subject.gaps))
            subject.meanGap = subject.meanGap.map { $0 + weight * (gap - $0) } ?? gap
        }
        subject.lastHeard = max(subject.lastHeard ?? time, time)
        let corrected = rssi - (receiverGain[receiver] ?? 0)
        if var link = subject.links[receiver] {
            let gap = max(0, time - link.lastHeard)
            let alpha = 1 - exp(-gap / configuration.smoothing)
            // A link back from silence starts afresh rather than averaging with stale levels.
            link.level = isSilent(link, at: time) ? corrected : link.level + alpha * (corrected - link.level)
            link.typicalGap = link.typicalGap.map { $0 + 0.1 * (min(gap, configuration.absence.upperBound) - $0) } ?? gap
            link.lastHeard = time
            subject.links[receiver] = link
        } else {
            subject.links[receiver] = Link(level: corrected, lastHeard: time, typicalGap: nil)
        }
        let events = decide(&subject, name: name, at: time)
        subjects[name] = subject
        return events
    }

    /// Moves the clock: subjects whose receivers all fell silent leave their rooms.
    public mutating func advance(to time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        for name in subjects.keys.sorted() {
            guard var subject = subjects[name] else { continue }
            events += decide(&subject, name: name, at: time)
            // A subject that left is forgotten only once its silence passes the ceiling: until
            // then it comes back with the reception rate it had, so a tag heard in bursts keeps
            // the bound its bursts taught.
            if subject.room == nil && subject.links.values.allSatisfy({ isSilent($0, at: time) })
                && time - (subject.lastHeard ?? time) > configuration.silenceCeiling {
                subjects[name] = nil
            } else {
                subjects[name] = subject
            }
        }
        return events
    }

    /// How long a silence `subject` keeps its room through (seconds), from its reception rate so
    /// far; nil for a subject not tracked.
    public func silenceBound(of subject: String) -> Double? {
        subjects[subject].map(silenceBound)
    }

    private func silenceBound(_ subject: Subject) -> Double {
        guard let gap = subject.meanGap, gap > 0 else { return configuration.absence.lowerBound }
        let bound = gap * log(max(M_E, 3600 / (gap * configuration.silenceFalseExitRate)))
        return min(configuration.silenceCeiling, max(configuration.absence.lowerBound, bound))
    }

    private func isSilent(_ link: Link, at time: Double) -> Bool {
        let limit = link.typicalGap.map { min(configuration.absence.upperBound, max(configuration.absence.lowerBound, $0 * configuration.silentIntervals)) }
            ?? configuration.absence.lowerBound
        return time - link.lastHeard > limit
    }

    private func decide(_ subject: inout Subject, name: String, at time: Double) -> [RoomEvent] {
        var scores: [String: Double] = [:]
        for (receiver, link) in subject.links where !isSilent(link, at: time) {
            guard let room = receiverRooms[receiver] else { continue }
            scores[room] = max(scores[room] ?? -.infinity, link.level)
        }
        // Best room, ties broken by name so the outcome does not depend on dictionary order.
        guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else {
            guard let room = subject.room else { return [] }
            // Held through a silence shorter than the subject's bound.
            if let last = subject.lastHeard, time - last <= silenceBound(subject) { return [] }
            subject.room = nil
            subject.candidate = nil
            return [RoomEvent(subject: name, room: room, kind: .exit, time: time)]
        }
        guard let current = subject.room else {
            subject.room = best.key
            subject.candidate = nil
            return [RoomEvent(subject: name, room: best.key, kind: .enter, time: time)]
        }
        let currentScore = scores[current]
        let wins = best.key != current && (currentScore == nil || best.value >= currentScore! + configuration.switchMargin)
        guard wins else {
            subject.candidate = nil
            return []
        }
        if subject.candidate != best.key {
            subject.candidate = best.key
            subject.candidateSince = time
        }
        // A room whose receivers all fell silent is left at once; otherwise wait out the dwell.
        guard currentScore == nil || time - subject.candidateSince >= configuration.dwell else { return [] }
        subject.room = best.key
        subject.candidate = nil
        return [RoomEvent(subject: name, room: current, kind: .exit, time: time),
                RoomEvent(subject: name, room: best.key, kind: .enter, time: time)]
    }
}
