/// A subject's room over time, as a list of changes: the truth sampled from the scenario, or
/// what a room decider announced.
struct RoomTimeline: Sendable {
    private(set) var changes: [(time: Double, room: String?)] = []

    /// Records the room from `time` on; several changes at one instant keep the last.
    mutating func set(_ room: String?, at time: Double) {
        if let last = changes.last, last.time == time {
            changes[changes.count - 1].room = room
        } else if changes.last.map({ $0.room != room }) ?? true {
            changes.append((time, room))
        }
    }

    /// The room at `time` (nil before the first change).
    func room(at time: Double) -> String? {
        var low = 0, high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : changes[low - 1].room
    }
}

/// How well one room decider followed the truth for a group of subjects.
struct RoomScore {
    var agreeing = 0
    var seconds = 0
    var latencies: [Double] = []
    /// True room changes the decider never followed before the next one.
    var missed = 0
    /// Changes the decider announced after its first room (flapping shows as many more than the truth's).
    var decidedChanges = 0
    /// Ghost presence: for each time the subject truly left a room, the seconds the decider
    /// still named that room (until the subject came back, at most).
    var ghosts: [Double] = []

    /// Compares at every whole second from 1 to `duration`, and measures each true change of
    /// room into a room (not out of every room) from the instant it happened until the decider
    /// first names that room; already naming it counts as no delay.
    mutating func add(truth: RoomTimeline, decided: RoomTimeline, duration: Double) {
        var second = 1.0
        while second <= duration {
            if truth.room(at: second) == decided.room(at: second) { agreeing += 1 }
            seconds += 1
            second += 1
        }
        decidedChanges += max(0, decided.changes.filter { $0.room != nil }.count - 1)
        let changes = truth.changes
        for (index, change) in changes.enumerated() where index > 0 {
            guard let room = change.room else { continue }
            let until = index + 1 < changes.count ? changes[index + 1].time : duration
            if decided.room(at: change.time) == room {
                latencies.append(0)
            } else if let followed = decided.changes.first(where: { $0.time > change.time && $0.time <= until && $0.room == room }) {
                latencies.append(followed.time - change.time)
            } else {
                missed += 1
            }
        }
        addGhosts(truth: truth, decided: decided, duration: duration)
    }

    /// Adds another score's samples (another seed's run of the same decider).
    mutating func add(_ other: RoomScore) {
        agreeing += other.agreeing
        seconds += other.seconds
        latencies += other.latencies
        missed += other.missed
        decidedChanges += other.decidedChanges
        ghosts += other.ghosts
    }

    private mutating func addGhosts(truth: RoomTimeline, decided: RoomTimeline, duration: Double) {
        let changes = truth.changes
        for index in changes.indices.dropFirst() {
            guard let left = changes[index - 1].room, changes[index].room != left else { continue }
            let leftAt = changes[index].time
            guard decided.room(at: leftAt) == left else {
                ghosts.append(0)
                continue
            }
            let back = changes[(index + 1)...].first { $0.room == left }?.time ?? duration
            let gone = decided.changes.first { $0.time > leftAt && $0.room != left }?.time ?? duration
            ghosts.append(max(0, min(gone, back) - leftAt))
        }
    }
}
