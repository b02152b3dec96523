import BeaconLocate

/// What locating passes measured, kept as raw samples so that passes over several seeds add up
/// before any percentile is taken: a p95 over the pooled room changes, not a mean of p95s.
struct LocationTally {
    typealias Direction = LocationReport.Direction

    struct RoomEntry {
        var direction: Direction
        var decider: String
        var score: RoomScore
    }

    var errors: [Direction: [LocateMethod: [Double]]] = [:]
    /// In report order: per direction, the deciders as the first pass listed them.
    var rooms: [RoomEntry] = []

    mutating func add(_ other: LocationTally) {
        for (direction, byMethod) in other.errors {
            for (method, values) in byMethod { errors[direction, default: [:]][method, default: []] += values }
        }
        for entry in other.rooms {
            if let index = rooms.firstIndex(where: { $0.direction == entry.direction && $0.decider == entry.decider }) {
                rooms[index].score.add(entry.score)
            } else {
                rooms.append(entry)
            }
        }
    }

    var positionErrors: [LocationReport.PositionError] {
        Direction.allCases.flatMap { direction in
            LocateMethod.allCases.compactMap { method -> LocationReport.PositionError? in
                guard let values = errors[direction]?[method], let summary = ErrorSummary(errors: values) else { return nil }
                return LocationReport.PositionError(direction: direction, method: method.rawValue, median: summary.median, p90: summary.p90,
                                                    max: summary.max, fixes: summary.fixes)
            }
        }
    }

    var roomResults: [LocationReport.RoomResult] {
        rooms.map { entry in
            let score = entry.score
            let latency = score.latencies.isEmpty ? nil : Distribution(score.latencies)
            let ghost = score.ghosts.isEmpty ? nil : Distribution(score.ghosts)
            return LocationReport.RoomResult(
                direction: entry.direction, decider: entry.decider, accuracy: score.seconds > 0 ? Double(score.agreeing) / Double(score.seconds) : 0,
                seconds: score.seconds, trueChanges: score.latencies.count + score.missed, decidedChanges: score.decidedChanges,
                latencyP50: latency?.p50, latencyP95: latency?.p95, latencyMax: latency?.max, missed: score.missed,
                ghostP50: ghost?.p50, ghostP95: ghost?.p95, ghostMax: ghost?.max)
        }
    }
}
