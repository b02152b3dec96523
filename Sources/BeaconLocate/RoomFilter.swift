import BeaconKit
import Foundation

/// Decides each subject's room with a forward hidden Markov model over the map's rooms instead
/// of hysteresis on one point fix: the belief (a probability per room) moves between rooms only
/// along the doors graph, at a switching rate, and every cycle's fixes reweight it by how likely
/// each room makes them (``RoomLikelihood``). The announced room changes when another room's
/// probability reaches `threshold`; that margin, not a dwell, is what stops flapping, so a fix
/// deep inside the next room moves the decision at once while one near a wall does not.
public struct RoomFilter: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// Probability per second of walking through each door of the current room.
        public var switchRate: Double
        /// Probability per second of a change to a room not joined by a door (a recovery path
        /// for a wrong start or a map without doors).
        public var jumpRate: Double
        /// Belief another room needs before it is announced.
        public var threshold: Double
        /// Cycles in a row another room must hold `threshold` before it is announced.
        public var confirmations: Int
        /// Seconds without a fix after which the subject exits.
        public var absence: Double

        public init(switchRate: Double = 0.5, jumpRate: Double = 0.002, threshold: Double = 0.93, confirmations: Int = 1, absence: Double = 6) {
            self.confirmations = max(1, confirmations)
            self.switchRate = switchRate
            self.jumpRate = jumpRate
            self.threshold = threshold
            self.absence = absence
        }
    }

    /// One subject's belief and announced room.
    public struct Track: Hashable, Sendable {
        var belief: [Double]
        var room: Int?
        var lastTime: Double
        var candidate: Int?
        var candidateCycles = 0
    }

    public let configuration: Configuration
    public let rooms: [Room]
    /// neighbours[i]: the rooms sharing a door with room i.
    let neighbours: [[Int]]
    private var subjects: [String: Track] = [:]
    public static let maximumSubjects = 100_000

    public init(rooms: [Room], doors: [Door], configuration: Configuration = Configuration()) {
        self.rooms = rooms
        self.configuration = configuration
        var neighbours = [[Int]](repeating: [], count: rooms.count)
        for door in doors {
            let joined = rooms.indices.filter { rooms[$0].outline.contains(door.position, tolerance: 0.5) }
            for a in joined { for b in joined where a != b && !neighbours[a].contains(b) { neighbours[a].append(b) } }
        }
        self.neighbours = neighbours
    }

    public func room(of subject: String) -> String? { subjects[subject]?.room.map { rooms[$0].name } }

    /// The doors graph as built from the map: for each room (by index), the rooms it opens into.
    public var doorNeighbours: [[Int]] { neighbours }

    /// The belief per room (in `rooms` order) of `subject`, if it has one.
    public func belief(of subject: String) -> [Double]? { subjects[subject]?.belief }

    /// One cycle of evidence for `subject` at `time`: `likelihoods[i]` is how likely room i
    /// makes the cycle's fixes (any common scale; ``RoomLikelihood`` gives them).
    public mutating func observe(subject name: String, likelihoods: [Double], time: Double) -> [RoomEvent] {
        if subjects[name] == nil && subjects.count >= Self.maximumSubjects { return [] }
        var track = subjects[name]
        let events = observe(&track, subject: name, likelihoods: likelihoods, time: time)
        subjects[name] = track
        return events
    }

    /// The same for a subject whose track the caller keeps (nil before its first cycle), so a
    /// caller holding many subjects can sweep only those it knows fell silent.
    public func observe(_ track: inout Track?, subject name: String, likelihoods: [Double], time: Double) -> [RoomEvent] {
        guard likelihoods.count == rooms.count, !rooms.isEmpty,
              likelihoods.allSatisfy({ $0.isFinite && $0 >= 0 }), likelihoods.contains(where: { $0 > 0 }) else { return [] }
        var subject = track ?? Track(belief: [Double](repeating: 1 / Double(rooms.count), count: rooms.count), room: nil, lastTime: time)
        defer { track = subject }
        subject.belief = predicted(subject.belief, elapsed: min(30, max(0, time - subject.lastTime)))
        subject.lastTime = time
        var total = 0.0
        for index in rooms.indices {
            subject.belief[index] *= likelihoods[index]
            total += subject.belief[index]
        }
        guard total > 0, total.isFinite else {
            subject.belief = likelihoods.map { $0 / likelihoods.reduce(0, +) }
            return []
        }
        for index in rooms.indices { subject.belief[index] /= total }
        let best = subject.belief.indices.max { subject.belief[$0] < subject.belief[$1] }!
        guard let current = subject.room else {
            subject.room = best
            return [RoomEvent(subject: name, room: rooms[best].name, kind: .enter, time: time)]
        }
        guard best != current, subject.belief[best] >= configuration.threshold else {
            subject.candidate = nil
            return []
        }
        if subject.candidate == best { subject.candidateCycles += 1 } else { subject.candidate = best; subject.candidateCycles = 1 }
        guard subject.candidateCycles >= configuration.confirmations else { return [] }
        subject.candidate = nil
        subject.room = best
        return [RoomEvent(subject: name, room: rooms[current].name, kind: .exit, time: time),
                RoomEvent(subject: name, room: rooms[best].name, kind: .enter, time: time)]
    }

    /// Moves the clock: subjects without a fix for `absence` seconds leave their rooms.
    public mutating func advance(to time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        for name in subjects.keys.sorted() {
            var track = subjects[name]
            events += advance(&track, subject: name, to: time)
            subjects[name] = track
        }
        return events
    }

    /// The same for one caller-kept track: after `absence` seconds without a fix it leaves its
    /// room and becomes nil.
    public func advance(_ track: inout Track?, subject name: String, to time: Double) -> [RoomEvent] {
        guard let subject = track, time - subject.lastTime > configuration.absence else { return [] }
        track = nil
        return subject.room.map { [RoomEvent(subject: name, room: rooms[$0].name, kind: .exit, time: time)] } ?? []
    }

    /// The room a caller-kept track names, if any.
    public func room(of track: Track?) -> String? { track?.room.map { rooms[$0].name } }

    /// The belief after `elapsed` seconds of walking: each room passes a share through each of
    /// its doors and a small share anywhere.
    private func predicted(_ belief: [Double], elapsed: Double) -> [Double] {
        guard elapsed > 0, rooms.count > 1 else { return belief }
        let jump = min(0.5, configuration.jumpRate * elapsed)
        var next = [Double](repeating: 0, count: belief.count)
        for index in belief.indices {
            let mass = belief[index]
            let doors = neighbours[index]
            let through = doors.isEmpty ? 0 : min(0.5, configuration.switchRate * elapsed * Double(doors.count))
            next[index] += mass * (1 - through - jump)
            for door in doors { next[door] += mass * through / Double(doors.count) }
            let others = Double(belief.count - 1)
            for other in belief.indices where other != index { next[other] += mass * jump / others }
        }
        return next
    }
}

/// How likely each room makes a position fix: the fix is taken as the true position blurred
/// by a Gaussian of `spread` metres, so the likelihood of a room is the mean of that Gaussian
/// over the room's floor (sampled on a grid), plus an outlier share spread evenly over the
/// site so that one wild fix cannot rule a room out.
public struct RoomLikelihood: Sendable, Hashable {
    public let spread: Double
    public let outlierShare: Double
    private let cells: [[Position]]
    private let boxes: [(minX: Double, minY: Double, maxX: Double, maxY: Double)]
    private let siteArea: Double

    public static func == (lhs: RoomLikelihood, rhs: RoomLikelihood) -> Bool {
        lhs.spread == rhs.spread && lhs.outlierShare == rhs.outlierShare && lhs.cells == rhs.cells
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(spread); hasher.combine(outlierShare); hasher.combine(cells)
    }

    /// `cellSize` is the sampling grid's step; at most `maximumCells` cells per room (the grid
    /// coarsens for larger rooms) so the cost stays bounded.
    public init(rooms: [Room], spread: Double = 0.5, outlierShare: Double = 0.1, cellSize: Double = 0.5, maximumCells: Int = 2000) {
        self.spread = max(0.1, spread)
        self.outlierShare = min(max(outlierShare, 0), 1)
        var cells: [[Position]] = []
        var boxes: [(minX: Double, minY: Double, maxX: Double, maxY: Double)] = []
        var area = 0.0
        for room in rooms {
            let xs = room.outline.vertices.map(\.x), ys = room.outline.vertices.map(\.y)
            let box = (minX: xs.min() ?? 0, minY: ys.min() ?? 0, maxX: xs.max() ?? 0, maxY: ys.max() ?? 0)
            boxes.append(box)
            let width = box.maxX - box.minX, height = box.maxY - box.minY
            let step = max(cellSize, (width * height / Double(maximumCells)).squareRoot(), 1e-3)
            // Counted in whole cells, so a huge or degenerate outline cannot stall the loop:
            // at most about 3 × maximumCells points are tried.
            let columns = width.isFinite ? Int(min((width / step).rounded(.up), Double(maximumCells))) : 0
            let rows = height.isFinite ? Int(min((height / step).rounded(.up), Double(maximumCells))) : 0
            var roomCells: [Position] = []
            for row in 0..<max(0, rows) where roomCells.count < maximumCells {
                for column in 0..<max(0, columns) where roomCells.count < maximumCells {
                    let point = Position(x: box.minX + (Double(column) + 0.5) * step, y: box.minY + (Double(row) + 0.5) * step)
                    if room.outline.contains(point) { roomCells.append(point) }
                }
            }
            if roomCells.isEmpty { roomCells = [room.outline.centroid] }
            area += Double(roomCells.count) * step * step
            cells.append(roomCells)
        }
        self.cells = cells
        self.boxes = boxes
        siteArea = max(area, 1)
    }

    /// Likelihood per room (in the rooms' order) of a fix at `position`.
    public func likelihoods(of position: Position) -> [Double] { likelihoods(of: position, spread: spread) }

    /// The same with another spread (m) for this fix (at least 0.1 m, as at `init`).
    public func likelihoods(of position: Position, spread requested: Double) -> [Double] {
        let spread = requested.isFinite ? max(0.1, requested) : self.spread
        let inverse = 1 / (2 * spread * spread)
        let normal = 1 / (2 * Double.pi * spread * spread)
        let reach = 4 * spread
        return cells.indices.map { room in
            let box = boxes[room]
            let dx = max(box.minX - position.x, 0, position.x - box.maxX)
            let dy = max(box.minY - position.y, 0, position.y - box.maxY)
            var mean = 0.0
            if dx * dx + dy * dy <= reach * reach {
                var sum = 0.0
                for cell in cells[room] {
                    let ex = cell.x - position.x, ey = cell.y - position.y
                    sum += exp(-(ex * ex + ey * ey) * inverse)
                }
                mean = normal * sum / Double(cells[room].count)
            }
            return (1 - outlierShare) * mean + outlierShare / siteArea
        }
    }
}
