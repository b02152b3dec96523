import Foundation

/// A zone's check-in rule: a device checks in once per visit, when its time inside the zone
/// during the visit reaches `dwell` seconds; a visit ends when the device has been out of the
/// zone for `absence` seconds, so a phone that drops out for a moment is still on the same visit.
public struct CheckinRule: Sendable, Hashable, Codable {
    public var dwell: Double
    public var absence: Double

    public init(dwell: Double, absence: Double) {
        self.dwell = dwell
        self.absence = absence
    }

    /// A device's enter or exit of the zone, on its own clock.
    public enum Transition: Sendable, Hashable {
        case enter(Double)
        case exit(Double)

        public var time: Double {
            switch self { case .enter(let time), .exit(let time): time }
        }
    }

    /// One device's current visit of one zone.
    public struct Visit: Sendable, Hashable {
        public var start: Double
        /// When the device last entered, nil while it is out of the zone.
        public var insideSince: Double?
        /// Seconds inside during this visit before `insideSince`.
        public var dwellBefore: Double
        public var lastExit: Double?
        /// The latest transition applied; older ones (a late batch) are ignored.
        public var latest: Double
        public var checkedInAt: Double?

        public init(start: Double, insideSince: Double?, dwellBefore: Double, lastExit: Double?, latest: Double, checkedInAt: Double?) {
            self.start = start
            self.insideSince = insideSince
            self.dwellBefore = dwellBefore
            self.lastExit = lastExit
            self.latest = latest
            self.checkedInAt = checkedInAt
        }
    }

    /// A check-in: the visit it belongs to and the moment the dwell threshold was passed.
    public struct CheckIn: Sendable, Hashable, Codable {
        public var visitStart: Double
        public var time: Double
    }

    /// Applies one batch's transitions of the zone (any order), then the batch's last sighting
    /// time `now` (the device is still inside if it has not exited). Returns the new visit and
    /// the check-ins the batch caused: at most one per visit.
    public func step(_ visit: Visit?, transitions: [Transition], now: Double?) -> (visit: Visit?, checkIns: [CheckIn]) {
        var visit = visit
        var checkIns: [CheckIn] = []
        for transition in transitions.sorted(by: { $0.time < $1.time }) {
            if let current = visit, transition.time < current.latest { continue }
            switch transition {
            case .enter(let time):
                if var current = visit, current.insideSince == nil, let exit = current.lastExit, time - exit < absence {
                    current.insideSince = time
                    current.latest = time
                    visit = current
                } else if var current = visit, current.insideSince != nil {
                    current.latest = time
                    visit = current
                } else {
                    visit = Visit(start: time, insideSince: time, dwellBefore: 0, lastExit: nil, latest: time, checkedInAt: nil)
                }
            case .exit(let time):
                guard var current = visit, let since = current.insideSince else { continue }
                checkIns += checkInIfDue(&current, at: time)
                current.dwellBefore += time - since
                current.insideSince = nil
                current.lastExit = time
                current.latest = time
                visit = current
            }
        }
        if let now, var current = visit, now >= current.latest {
            checkIns += checkInIfDue(&current, at: now)
            visit = current
        }
        return (visit, checkIns)
    }

    /// Whether a stored visit is over at `time` (out of the zone for the absence), so that its
    /// row can go.
    public func isOver(_ visit: Visit, at time: Double) -> Bool {
        guard visit.insideSince == nil, let exit = visit.lastExit else { return false }
        return time - exit >= absence
    }

    private func checkInIfDue(_ visit: inout Visit, at time: Double) -> [CheckIn] {
        guard visit.checkedInAt == nil, let since = visit.insideSince else { return [] }
        guard visit.dwellBefore + (time - since) >= dwell else { return [] }
        let moment = since + max(0, dwell - visit.dwellBefore)
        visit.checkedInAt = moment
        return [CheckIn(visitStart: visit.start, time: moment)]
    }
}
