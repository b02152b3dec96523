import Foundation

/// How one device's passage through a queue is measured: its wait runs from its enter of the
/// entry zone to its enter of the service zone. A device that is not seen in the queue's zones
/// for `abandonAfter` seconds without having reached service abandoned. After service the
/// device is ignored by the entry zone (it walks out past it) until it has been away for
/// `abandonAfter`; then an entry enter starts a new passage.
public struct QueueRule: Sendable, Hashable {
    public var abandonAfter: Double

    public init(abandonAfter: Double) {
        self.abandonAfter = abandonAfter
    }

    /// What a batch showed of the queue's zones, on the device's clock.
    public enum Observation: Sendable, Hashable {
        case entryEnter(Double)
        /// Heard the entry or the service zone's beacon.
        case seen(Double)
        case serviceEnter(Double)

        public var time: Double {
            switch self { case .entryEnter(let time), .seen(let time), .serviceEnter(let time): time }
        }

        /// Enters before sightings at the same instant, so a first sighting opens the passage.
        var order: Int {
            switch self { case .entryEnter: 0; case .serviceEnter: 1; case .seen: 2 }
        }
    }

    /// One device's passage through the queue.
    public struct Passage: Sendable, Hashable {
        public var enteredAt: Double
        public var lastSeen: Double
        public var served: Bool

        public init(enteredAt: Double, lastSeen: Double, served: Bool) {
            self.enteredAt = enteredAt
            self.lastSeen = lastSeen
            self.served = served
        }
    }

    public enum Outcome: Sendable, Hashable {
        case served(enteredAt: Double, at: Double)
        /// `at` is when the device was last seen in the queue.
        case abandoned(enteredAt: Double, at: Double)
    }

    public func step(_ passage: Passage?, observations: [Observation]) -> (passage: Passage?, outcomes: [Outcome]) {
        var passage = passage
        var outcomes: [Outcome] = []
        for observation in observations.sorted(by: { ($0.time, $0.order) < ($1.time, $1.order) }) {
            let time = observation.time
            if let current = passage, time - current.lastSeen >= abandonAfter {
                if let ended = expire(current) { outcomes.append(ended) }
                passage = nil
            }
            switch observation {
            case .entryEnter:
                if passage == nil { passage = Passage(enteredAt: time, lastSeen: time, served: false) }
            case .serviceEnter:
                if var current = passage, !current.served, time >= current.enteredAt {
                    current.served = true
                    outcomes.append(.served(enteredAt: current.enteredAt, at: time))
                    passage = current
                }
            case .seen:
                break
            }
            if var current = passage {
                current.lastSeen = max(current.lastSeen, time)
                passage = current
            }
        }
        return (passage, outcomes)
    }

    /// Whether a passage is over on the queue's clock: the device has been away long enough.
    public func isOver(_ passage: Passage, at clock: Double) -> Bool {
        clock - passage.lastSeen >= abandonAfter
    }

    /// What an ended passage counts as: abandonment when the device never reached service.
    public func expire(_ passage: Passage) -> Outcome? {
        passage.served ? nil : .abandoned(enteredAt: passage.enteredAt, at: passage.lastSeen)
    }
}
