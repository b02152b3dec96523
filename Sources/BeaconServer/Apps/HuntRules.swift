import Foundation

/// How one stamp changes a device's run: pure, so the rules are tested without a server.
///
/// A leg between two stamps is judged on the straight line between their zones' positions in
/// the registry, which is never longer than any walking route, less twice the hunt's stamp reach
/// (a stamp's beacon is heard before one stands at it). So an honest walker is never refused for
/// a detour; what is refused could not have been walked at all.
struct HuntRules: Sendable {
    var hunt: Hunt
    /// Plan position (metres) of each stamp's zone, by stamp number.
    var positions: [Int: (x: Double, y: Double)]

    /// The run after the device entered stamp `number` at `time` (device clock); nil when it
    /// changes nothing (a stamp already collected, or a run already decided).
    func collect(_ number: Int, at time: Double, into run: HuntRun, now: Double) -> HuntRun? {
        guard run.status == .collecting, !run.stamps.contains(where: { $0.number == number }) else { return nil }
        var next = run
        next.updatedAt = now
        if let first = run.stamps.first, time - first.time > hunt.timeLimit {
            next.status = .expired
            next.reason = "time limit of \(Self.seconds(hunt.timeLimit)) passed: stamp \(number) came \(Self.seconds(time - first.time)) after stamp \(first.number)"
            return next
        }
        if let previous = run.stamps.last, let refusal = impossibleLeg(from: previous, to: HuntRun.Stamp(number: number, time: time)) {
            next.status = .refused
            next.reason = refusal
            return next
        }
        next.stamps.append(HuntRun.Stamp(number: number, time: time))
        if Set(next.stamps.map(\.number)).count == hunt.stampZoneIDs.count {
            next.status = .finished
            next.duration = time - next.stamps[0].time
            next.reward = hunt.reward
            next.rewardedAt = now
        }
        return next
    }

    /// The reason a leg is refused, worded "stamps 3→4 in 2 s, 60 m apart", or nil when it
    /// could have been walked.
    func impossibleLeg(from previous: HuntRun.Stamp, to stamp: HuntRun.Stamp) -> String? {
        guard let a = positions[previous.number], let b = positions[stamp.number] else { return nil }
        let apart = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
        let walkable = max(0, apart - 2 * hunt.stampReach)
        let elapsed = max(0, stamp.time - previous.time)
        guard elapsed * hunt.maxSpeed < walkable else { return nil }
        return "stamps \(previous.number)→\(stamp.number) in \(Self.seconds(elapsed)), \(Self.metres(apart)) apart"
            + " (at \(Self.number(hunt.maxSpeed)) m/s at most, less \(Self.metres(hunt.stampReach)) of reach at each stamp, it takes \(Self.seconds(walkable / hunt.maxSpeed)))"
    }

    static func seconds(_ value: Double) -> String { "\(number(value)) s" }
    static func metres(_ value: Double) -> String { "\(Int(value.rounded())) m" }

    /// One decimal below 10, whole numbers above; no trailing ".0".
    static func number(_ value: Double) -> String {
        let rounded = value < 10 ? (value * 10).rounded() / 10 : value.rounded()
        // Int(exactly:) and not Int(_:), which traps on values beyond Int's range.
        return Int(exactly: rounded).map { String($0) } ?? String(format: "%.1f", rounded)
    }
}
