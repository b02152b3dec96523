import BeaconKit
/// A walker's route: waypoints visited in order at a constant walking speed, with a pause at
/// each, optionally looping back to the first.
public struct WalkerPath: Sendable, Hashable {
    public struct Waypoint: Sendable, Hashable {
        public var point: Position3D
        /// Seconds spent standing at this waypoint after arriving.
        public var pause: Double

        public init(_ point: Position3D, pause: Double = 0) {
            self.point = point
            self.pause = pause
        }
    }

    public var waypoints: [Waypoint]
    /// Metres per second; 1.2–1.4 is an ordinary walking pace.
    public var speed: Double
    public var loop: Bool
    /// Simulated second at which the walker leaves the first waypoint (it stands there before).
    public var start: Double

    private let legs: [Leg]
    /// Seconds for one pass through the route (back to the start when looping).
    public let period: Double

    public init(waypoints: [Waypoint], speed: Double, loop: Bool = false, start: Double = 0) {
        precondition(!waypoints.isEmpty && speed > 0, "a path needs a waypoint and a positive speed")
        self.waypoints = waypoints
        self.speed = speed
        self.loop = loop
        self.start = start
        var legs: [Leg] = []
        var clock = 0.0
        let route = loop ? waypoints + [waypoints[0]] : waypoints
        for index in route.indices {
            let here = route[index]
            if index > 0 {
                let previous = route[index - 1].point
                let duration = previous.distance(to: here.point) / speed
                if duration > 0 {
                    legs.append(Leg(start: clock, duration: duration, from: previous, to: here.point))
                    clock += duration
                }
            }
            // The closing leg of a loop returns to the first waypoint, whose pause opens the next pass.
            let isClosing = loop && index == route.count - 1
            if !isClosing && here.pause > 0 {
                legs.append(Leg(start: clock, duration: here.pause, from: here.point, to: here.point))
                clock += here.pause
            }
        }
        self.legs = legs
        self.period = clock
    }

    /// Where the walker is at `time`, and which way it faces (unit vector in the floor plane).
    public func state(at time: Double) -> (position: Position3D, heading: (x: Double, y: Double)) {
        var local = time - start
        let first = waypoints[0].point
        guard local > 0, period > 0, !legs.isEmpty else { return (first, initialHeading) }
        if loop {
            local = local.truncatingRemainder(dividingBy: period)
        } else if local >= period {
            return (waypoints[waypoints.count - 1].point, finalHeading)
        }
        // Binary search for the leg that holds `local`.
        var low = 0, high = legs.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if legs[middle].start <= local { low = middle } else { high = middle - 1 }
        }
        let leg = legs[low]
        let fraction = min(1, max(0, (local - leg.start) / leg.duration))
        let position = Position3D(x: leg.from.x + (leg.to.x - leg.from.x) * fraction,
                             y: leg.from.y + (leg.to.y - leg.from.y) * fraction,
                             z: leg.from.z + (leg.to.z - leg.from.z) * fraction)
        return (position, heading(beforeOrAt: low))
    }

    /// A pause keeps the heading of the leg that led into it.
    private func heading(beforeOrAt index: Int) -> (x: Double, y: Double) {
        var index = index
        while index >= 0 {
            if let direction = legs[index].direction { return direction }
            index -= 1
        }
        return initialHeading
    }

    private var initialHeading: (x: Double, y: Double) { legs.lazy.compactMap(\.direction).first ?? (1, 0) }
    private var finalHeading: (x: Double, y: Double) { legs.reversed().lazy.compactMap(\.direction).first ?? (1, 0) }

    private struct Leg: Sendable, Hashable {
        var start: Double
        var duration: Double
        var from: Position3D
        var to: Position3D

        var direction: (x: Double, y: Double)? {
            let dx = to.x - from.x, dy = to.y - from.y
            let length = (dx * dx + dy * dy).squareRoot()
            return length > 0 ? (dx / length, dy / length) : nil
        }
    }

    public static func == (lhs: WalkerPath, rhs: WalkerPath) -> Bool {
        lhs.waypoints == rhs.waypoints && lhs.speed == rhs.speed && lhs.loop == rhs.loop && lhs.start == rhs.start
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(waypoints); hasher.combine(speed); hasher.combine(loop); hasher.combine(start)
    }
}
