/// Which rotated identities the server accepts at a time: the rule every resolution applies.
///
/// The current and the next period resolve (a beacon whose clock runs ahead is already on the
/// next). The previous one resolves only during the grace after the boundary (a beacon whose
/// clock runs behind). Anything older is a replay: someone recorded the identity and plays it
/// back later.
public enum RotationVerdict: Sendable, Hashable {
    case current
    case next
    case previousWithinGrace
    /// An identity from `periodsAgo` periods back (1 = the previous period past its grace).
    case replay(periodsAgo: Int64)
    /// Further ahead than the next period: not a replay, but not to be trusted either.
    case future(periodsAhead: Int64)

    public var resolves: Bool {
        switch self {
        case .current, .next, .previousWithinGrace: true
        case .replay, .future: false
        }
    }
}

extension RotationPeriod {
    /// The verdict on an identity of period `number` seen at `time`.
    public func verdict(period number: Int64, at time: Double) -> RotationVerdict {
        let current = self.number(at: time)
        switch number - current {
        case 0: return .current
        case 1: return .next
        case -1 where time - start(of: current) < grace: return .previousWithinGrace
        case let difference where difference < 0: return .replay(periodsAgo: -difference)
        case let difference: return .future(periodsAhead: difference)
        }
    }

    /// How many past periods an index keeps to recognise replays: at least two, enough to cover
    /// two days, at most 96, so the index stays bounded whatever the period.
    public var replayLookback: Int64 {
        max(2, min(96, Int64((2 * 86_400 + seconds - 1) / seconds)))
    }
}
