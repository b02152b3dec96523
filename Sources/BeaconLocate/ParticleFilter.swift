import BeaconKit
import Foundation

/// Tracks one moving receiver (or carried beacon) over time. Each particle is a guess of the
/// position; between updates every particle takes a random walking step (a person walks at
/// most a couple of metres per second) and steps that would pass through a wall are refused;
/// each scan reweights the particles by how well the path-loss model explains its readings
/// under the same Cauchy loss as ``RobustTrilateration``. Deterministic for a given seed.
public struct ParticleFilter: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        public var particles: Int
        /// Typical walking speed (m/s): the spread of a step grows with the time since the last update.
        public var walkingSpeed: Double
        /// Cauchy scale of the RSSI residuals, dB.
        public var lossScale: Double
        public var seed: UInt64
        /// The user's body, for a receiver a person carries: each particle then also guesses
        /// the person's heading, and beacons behind it are expected weaker (``BodyShadow``).
        public var body: BodyShadow?
        /// ``GainHandling/unknown``: each particle is scored on the scan's readings less their
        /// median residual there, so a receiver's gain (or the beacons' common power error)
        /// costs nothing; only the differences between beacons place the cloud.
        public var gain: GainHandling
        /// The share of particles that stand (nearly) still at each step (a quarter of the
        /// walking spread): people pause, and a cloud that can only walk blurs every pause.
        public var stillFraction: Double
        /// Nats by which the recovery hint must explain a scan better than the best particle,
        /// two scans in a row, for the cloud to count as lost (``lostMargin`` by default).
        public var lostMargin: Double
        /// The spread (m) of the particles redrawn around the recovery hint; nil: the hint's own
        /// uncertainty (at least 1 m).
        public var recoveryRadius: Double?
        /// Whether a cloud whose fix leaves the beacons heard, or whose weights collapse, is
        /// redrawn whole around the recovery hint (``ParticleFilter/reseeds``).
        public var reseedsWhenDiverged: Bool

        public static let defaultParticles = 1000
        /// The share of particles standing still in ``uncalibrated(particles:seed:body:)``: on UCI's
        /// survey walk 80 % of consecutive scans are in the same cell, and people at a venue
        /// mostly stand or sit.
        public static let pausingShare = 0.8

        public init(particles: Int = Self.defaultParticles, walkingSpeed: Double = 1.2, lossScale: Double = 5, seed: UInt64 = 1, body: BodyShadow? = nil,
                    gain: GainHandling = .calibrated, stillFraction: Double = 0, lostMargin: Double = ParticleFilter.lostMargin, recoveryRadius: Double? = nil,
                    reseedsWhenDiverged: Bool = false) {
            self.particles = max(1, particles)
            self.walkingSpeed = walkingSpeed
            self.lossScale = lossScale
            self.seed = seed
            self.body = body
            self.gain = gain
            self.stillFraction = min(1, max(0, stillFraction))
            self.lostMargin = lostMargin
            self.recoveryRadius = recoveryRadius
            self.reseedsWhenDiverged = reseedsWhenDiverged
        }

        /// For a receiver nobody calibrated (no survey, a phone of unknown gain): gain-free
        /// scoring, pauses, and a cloud that counts as lost once a robust fix (the strongest-four
        /// centroid) explains two scans in a row by 1 nat more than its best particle.
        public static func uncalibrated(particles: Int = Self.defaultParticles, seed: UInt64 = 1, body: BodyShadow? = nil) -> Configuration {
            Configuration(particles: particles, seed: seed, body: body, gain: .unknown, stillFraction: Self.pausingShare, lostMargin: 1, recoveryRadius: 1.5,
                          reseedsWhenDiverged: true)
        }
    }

    public private(set) var anchors: AnchorSet
    public let walls: [Segment]
    public let configuration: Configuration
    private var xs: [Double] = []
    private var ys: [Double] = []
    /// Radians; empty without a body model.
    private var headings: [Double] = []
    private var logWeights: [Double] = []
    private var generator: SplitMix64
    private var lastTime: Double?
    /// Scans in a row that the position hint explained far better than any particle.
    private var lostScans = 0
    /// Times the cloud was found lost and half of it redrawn around the hint.
    public private(set) var recoveries = 0
    /// Times the cloud's fix fell far outside the beacons heard (or its weights collapsed) and
    /// the whole cloud was redrawn around the recovery hint.
    public private(set) var reseeds = 0
    /// With ``GainHandling/unknown``: the receiver's offset from the model (gain and common
    /// power error) learnt online from the scans' median residual at each fix, nil before the
    /// first scan with two readings.
    public private(set) var gainEstimate: Double?

    public init(anchors: AnchorSet, walls: [MapWall] = [], configuration: Configuration = Configuration()) {
        self.anchors = anchors
        self.walls = walls.map(\.segment)
        self.configuration = configuration
        generator = SplitMix64(seed: configuration.seed)
    }

    /// The same anchors under a new calibration (path-loss model, powers, gains): the particles
    /// stay where they are. A caller that keeps a filter across refits of its site's
    /// calibration weighs the next scans with the new model instead of starting a new cloud.
    public mutating func reanchor(_ anchors: AnchorSet) {
        precondition(anchors.xs.count == self.anchors.xs.count, "a particle filter is reanchored to the same anchors only")
        self.anchors = anchors
    }

    /// Moves the particles to `time` and weighs them with the scan. The first scan scatters
    /// the particles around the weighted centroid.
    ///
    /// A `positionHint` is another estimator's fix for the same scan (fingerprints): particles
    /// are also weighed by their distance from it, relative to its uncertainty.
    ///
    /// A `recoveryHint` (used when there is no position hint) only serves to find a lost cloud
    /// (the recovery of a lost cloud): a fix too rough to weigh particles by (robust trilateration, where
    /// no survey gives fingerprints) still says where to look once the cloud explains the
    /// scans far worse than that spot does.
    public mutating func update(_ readings: [Reading], at time: Double, positionHint: Fix? = nil, recoveryHint: Fix? = nil) -> Fix? {
        guard !readings.isEmpty else { return nil }
        if xs.isEmpty || lastTime == nil {
            guard let start = positionHint ?? WeightedCentroid(anchors: anchors).locate(readings) else { return nil }
            scatter(around: start.position, radius: max(2, start.uncertainty))
        } else if let lastTime {
            // A gap of minutes means the target could be anywhere a walk could take it; cap the
            // step so the cloud stays useful.
            let elapsed = min(30, max(0, time - lastTime))
            move(sigma: configuration.walkingSpeed * elapsed.squareRoot() * 0.8 + 0.1)
            turn(elapsed: elapsed)
        }
        lastTime = time
        let bestScan = weigh(readings, hint: positionHint)
        if let hint = positionHint ?? recoveryHint { recoverIfLost(readings, hint: hint, bestScan: bestScan) }
        var fix = estimate()
        if configuration.reseedsWhenDiverged, let hint = recoveryHint ?? positionHint, diverged(fix, readings: readings) {
            // Never report a spot far from every beacon heard: start again where a robust fix is.
            reseeds += 1
            scatter(around: hint.position, radius: configuration.recoveryRadius ?? max(1, hint.uncertainty))
            _ = weigh(readings, hint: positionHint)
            fix = estimate()
        }
        learnGain(readings, at: fix.position)
        resampleIfDegenerate()
        return fix
    }

    /// Beyond this distance (m) outside the box of the beacons heard, a fix counts as lost.
    static let outsideHeardMargin = 3.0

    /// A cloud whose weights rest on a handful of particles (effective size under 1 %) or whose
    /// fix lies more than ``outsideHeardMargin`` outside the box of the three or more beacons it
    /// heard has lost the receiver: no walk explains it, and resampling alone would keep it there.
    private func diverged(_ fix: Fix, readings: [Reading]) -> Bool {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for reading in readings {
            minX = min(minX, anchors.xs[reading.beacon]); maxX = max(maxX, anchors.xs[reading.beacon])
            minY = min(minY, anchors.ys[reading.beacon]); maxY = max(maxY, anchors.ys[reading.beacon])
        }
        // One or two beacons heard say little of where the receiver is not (a weak one is heard
        // well beyond 3 m): their box only counts when three or more frame it. (On UJI geo's
        // scans of one or two beacons a box of twice the margin still took the median from
        // 1.85 m to 2.19 m.)
        let margin = Self.outsideHeardMargin
        if readings.count >= 3, fix.position.x < minX - margin || fix.position.x > maxX + margin || fix.position.y < minY - margin || fix.position.y > maxY + margin {
            return true
        }
        var total = 0.0, squares = 0.0
        for logWeight in logWeights {
            let weight = exp(logWeight)
            total += weight; squares += weight * weight
        }
        return total * total < Double(logWeights.count) * 0.01 * squares
    }

    private mutating func scatter(around centre: Position, radius: Double) {
        let count = configuration.particles
        xs = []; ys = []; headings = []
        xs.reserveCapacity(count); ys.reserveCapacity(count)
        for _ in 0..<count {
            let (gx, gy) = gaussianPair()
            let point = onFloor(centre.x + radius * gx, centre.y + radius * gy)
            xs.append(point.x); ys.append(point.y)
            if configuration.body != nil { headings.append(Double.random(in: 0..<(2 * .pi), using: &generator)) }
        }
        logWeights = [Double](repeating: 0, count: count)
    }

    /// A step through a wall is drawn again (up to `stepAttempts` times, then the particle
    /// stays): steps come from the walking model restricted to walkable ones, so the cloud still
    /// flows through a door at walking pace instead of piling up against the wall beside it.
    private mutating func move(sigma walking: Double) {
        let still = configuration.stillFraction
        for index in xs.indices {
            let sigma = still > 0 && Double.random(in: 0..<1, using: &generator) < still ? walking * 0.25 : walking
            for _ in 0..<Self.stepAttempts {
                let (gx, gy) = gaussianPair()
                let target = onFloor(xs[index] + sigma * gx, ys[index] + sigma * gy)
                if !walls.isEmpty {
                    let step = Segment(from: Position(x: xs[index], y: ys[index]), to: target)
                    if walls.contains(where: { $0.crosses(step) }) { continue }
                }
                xs[index] = target.x; ys[index] = target.y
                break
            }
        }
    }

    static let stepAttempts = 4

    /// Clamps a point a millimetre inside the floor: a particle clamped onto the very edge would
    /// step along it through the end of a wall that stops at the edge, which the crossing test
    /// (touching an end point does not count) lets through.
    private func onFloor(_ x: Double, _ y: Double) -> Position {
        let insetX = min(Self.edgeInset, anchors.width / 2), insetY = min(Self.edgeInset, anchors.height / 2)
        return Position(x: min(anchors.width - insetX, max(insetX, x)), y: min(anchors.height - insetY, max(insetY, y)))
    }

    static let edgeInset = 0.001

    /// A person turns a little most of the time and now and then faces anywhere: headings drift
    /// by `headingDrift` rad per √s, and `headingRestart` of them per second are drawn anew, so a
    /// cloud that settled on one heading can still find another.
    private mutating func turn(elapsed: Double) {
        guard !headings.isEmpty else { return }
        let restart = 1 - exp(-Self.headingRestart * elapsed)
        for index in headings.indices {
            if Double.random(in: 0..<1, using: &generator) < restart {
                headings[index] = Double.random(in: 0..<(2 * .pi), using: &generator)
            } else {
                headings[index] += Self.headingDrift * elapsed.squareRoot() * gaussianPair().0
            }
        }
    }

    static let headingDrift = 0.3
    static let headingRestart = 0.1

    /// A margin (nats) by which the hint must explain a scan better than the best particle, and
    /// the scans in a row it must do so, before the cloud counts as lost. The best of a
    /// thousand particles near the target is about as good as any single spot, so only a cloud
    /// that is elsewhere (held in a room by its walls while the target walked out) falls this
    /// far behind.
    public static let lostMargin = 3.0
    static let lostScansBeforeRecovery = 2

    /// Redraws the least weighted half of the cloud around `hint` when the cloud has been lost
    /// for ``lostScansBeforeRecovery`` scans: walls let particles leave a room only through its
    /// door, and resampling keeps the ones that explain the readings least badly, so a cloud
    /// left behind (pinned in the corner nearest the target) does not find its way out alone.
    private mutating func recoverIfLost(_ readings: [Reading], hint: Fix, bestScan: Double) {
        let atHint = scanLogLikelihood(hint.position.x, hint.position.y, readings)
        lostScans = atHint - bestScan > configuration.lostMargin ? lostScans + 1 : 0
        guard lostScans >= Self.lostScansBeforeRecovery else { return }
        lostScans = 0
        recoveries += 1
        let radius = configuration.recoveryRadius ?? max(1, hint.uncertainty)
        let order = logWeights.indices.sorted { logWeights[$0] < logWeights[$1] }
        for index in order.prefix(xs.count / 2) {
            let (gx, gy) = gaussianPair()
            let point = onFloor(hint.position.x + radius * gx, hint.position.y + radius * gy)
            xs[index] = point.x; ys[index] = point.y
            if !headings.isEmpty { headings[index] = Double.random(in: 0..<(2 * .pi), using: &generator) }
            // Weighed by this scan alone, against the best particle's.
            logWeights[index] = scanLogLikelihood(point.x, point.y, readings) - bestScan
        }
        let largest = logWeights.max() ?? 0
        for index in logWeights.indices { logWeights[index] -= largest }
    }

    /// The scan's log-likelihood at one spot, without a body (the hint's spot has no heading).
    private func scanLogLikelihood(_ x: Double, _ y: Double, _ readings: [Reading]) -> Double {
        let inverseScale2 = 1 / (configuration.lossScale * configuration.lossScale)
        var residuals: [Double] = []
        residuals.reserveCapacity(readings.count)
        for reading in readings {
            let dx = x - anchors.xs[reading.beacon], dy = y - anchors.ys[reading.beacon]
            residuals.append(reading.rssi - anchors.model.expectedRSSI(power: anchors.powers[reading.beacon], squaredDistance: dx * dx + dy * dy)
                + anchors.wallLoss(x, y, reading.beacon))
        }
        let offset = configuration.gain == .unknown ? blendedOffset(median: Self.median(&residuals), readings: residuals.count) : 0
        var total = 0.0
        for r in residuals { total -= log1p((r - offset) * (r - offset) * inverseScale2) }
        return total
    }

    /// Readings' worth of weight the online gain estimate has beside a scan's own median: a scan
    /// of one or two beacons says little of the offset by itself (UCI: two scans in three hear
    /// one beacon), and with the estimate its level still places the particles.
    static let gainEstimateWeight = 2.0
    static let gainLearningRate = 0.1

    /// The offset a particle's residuals are taken less of: the scan's median residual there,
    /// drawn towards the receiver's learnt offset.
    @inline(__always)
    private func blendedOffset(median: Double, readings: Int) -> Double {
        guard let gainEstimate else { return median }
        let count = Double(readings)
        return (count * median + Self.gainEstimateWeight * gainEstimate) / (count + Self.gainEstimateWeight)
    }

    /// Learns the receiver's offset from a scan's median residual at the fix (scans of two or
    /// more readings: one reading's residual is the fix's own error as much as the gain).
    private mutating func learnGain(_ readings: [Reading], at fix: Position) {
        guard configuration.gain == .unknown, readings.count >= 2 else { return }
        var residuals = readings.map { reading -> Double in
            let dx = fix.x - anchors.xs[reading.beacon], dy = fix.y - anchors.ys[reading.beacon]
            return reading.rssi - anchors.model.expectedRSSI(power: anchors.powers[reading.beacon], squaredDistance: dx * dx + dy * dy)
                + anchors.wallLoss(fix.x, fix.y, reading.beacon)
        }
        let median = Self.median(&residuals)
        gainEstimate = gainEstimate.map { $0 + Self.gainLearningRate * (median - $0) } ?? median
    }

    /// The median of a few values, sorting them in place (insertion sort: a scan has tens of
    /// readings, and this runs once per particle).
    static func median(_ values: inout [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        for index in 1..<values.count {
            let value = values[index]
            var at = index
            while at > 0 && values[at - 1] > value {
                values[at] = values[at - 1]
                at -= 1
            }
            values[at] = value
        }
        let middle = values.count / 2
        return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
    }

    /// Weighs every particle by the scan (and the hint); returns the best particle's scan
    /// log-likelihood, without the hint.
    private mutating func weigh(_ readings: [Reading], hint: Fix?) -> Double {
        var bestScan = -Double.infinity
        let model = anchors.model
        let h2 = model.heightOffset * model.heightOffset
        let inverseScale2 = 1 / (configuration.lossScale * configuration.lossScale)
        var largest = -Double.infinity
        let body = headings.isEmpty ? nil : configuration.body
        let cosineLimit = cos(body?.halfAngle ?? 0)
        let unknownGain = configuration.gain == .unknown
        var residuals = [Double](repeating: 0, count: unknownGain ? readings.count : 0)
        for index in xs.indices {
            var logLikelihood = 0.0
            // Straight behind the person: the direction opposite the heading.
            let behindX = body == nil ? 0 : -cos(headings[index]), behindY = body == nil ? 0 : -sin(headings[index])
            for (position, reading) in readings.enumerated() {
                let dx = xs[index] - anchors.xs[reading.beacon], dy = ys[index] - anchors.ys[reading.beacon]
                let squared = dx * dx + dy * dy
                var r = reading.rssi - (anchors.powers[reading.beacon] - 5 * model.exponent * log10(squared + h2)
                    - anchors.wallLoss(xs[index], ys[index], reading.beacon))
                // (dx, dy) points from the beacon to the particle, so the beacon lies along −(dx, dy).
                if let body, squared > 0, -(dx * behindX + dy * behindY) >= cosineLimit * squared.squareRoot() { r += body.loss }
                if unknownGain { residuals[position] = r } else { logLikelihood -= log1p(r * r * inverseScale2) }
            }
            if unknownGain {
                var sorted = residuals
                let offset = blendedOffset(median: Self.median(&sorted), readings: sorted.count)
                for r in residuals { logLikelihood -= log1p((r - offset) * (r - offset) * inverseScale2) }
            }
            bestScan = max(bestScan, logLikelihood)
            if let hint {
                let dx = xs[index] - hint.position.x, dy = ys[index] - hint.position.y
                let sigma2 = max(1, hint.uncertainty * hint.uncertainty)
                logLikelihood -= 0.5 * (dx * dx + dy * dy) / sigma2
            }
            logWeights[index] += logLikelihood
            largest = max(largest, logWeights[index])
        }
        for index in logWeights.indices { logWeights[index] -= largest }
        return bestScan
    }

    private func estimate() -> Fix {
        var sum = 0.0, x = 0.0, y = 0.0
        for index in xs.indices {
            let weight = exp(logWeights[index])
            sum += weight; x += weight * xs[index]; y += weight * ys[index]
        }
        x /= sum; y /= sum
        var spread = 0.0
        for index in xs.indices {
            let dx = xs[index] - x, dy = ys[index] - y
            spread += exp(logWeights[index]) * (dx * dx + dy * dy)
        }
        return Fix(position: Position(x: x, y: y), uncertainty: (spread / sum).squareRoot(), method: .particle)
    }

    /// The share of the particles' weight inside each outline (in order), with the share in
    /// none of them last. Walls make the cloud flow through doors, so near a door this says how
    /// much of it is on each side, where the mean of the cloud may fall in a wall.
    public func mass(in outlines: [Polygon]) -> [Double] {
        var masses = [Double](repeating: 0, count: outlines.count + 1)
        guard !xs.isEmpty else { return masses }
        let boxes = outlines.map { outline -> (Double, Double, Double, Double) in
            let xs = outline.vertices.map(\.x), ys = outline.vertices.map(\.y)
            return (xs.min() ?? 0, ys.min() ?? 0, xs.max() ?? 0, ys.max() ?? 0)
        }
        var total = 0.0
        // Unsafe buffers: called once per subject and cycle over every particle, and a debug
        // build (the test suite's) spends most of it in bounds checks otherwise.
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                logWeights.withUnsafeBufferPointer { logWeights in
                    for index in 0..<xs.count {
                        let weight = exp(logWeights[index])
                        total += weight
                        let x = xs[index], y = ys[index]
                        var placed = outlines.count
                        for room in 0..<boxes.count {
                            let box = boxes[room]
                            if x >= box.0 && x <= box.2 && y >= box.1 && y <= box.3 && outlines[room].contains(Position(x: x, y: y)) {
                                placed = room
                                break
                            }
                        }
                        masses[placed] += weight
                    }
                }
            }
        }
        guard total > 0 else { return masses }
        return masses.map { $0 / total }
    }

    /// Systematic resampling once the effective sample size falls below half the particles.
    private mutating func resampleIfDegenerate() {
        let weights = logWeights.map { exp($0) }
        let total = weights.reduce(0, +)
        let squares = weights.reduce(0) { $0 + $1 * $1 }
        guard total > 0, (total * total) / squares < Double(xs.count) / 2 else { return }
        let count = xs.count
        let step = total / Double(count)
        var position = Double.random(in: 0..<step, using: &generator)
        var cumulative = weights[0]
        var source = 0
        var newXs = [Double](), newYs = [Double](), newHeadings = [Double]()
        newXs.reserveCapacity(count); newYs.reserveCapacity(count); newHeadings.reserveCapacity(headings.count)
        for _ in 0..<count {
            while position > cumulative && source < count - 1 {
                source += 1
                cumulative += weights[source]
            }
            newXs.append(xs[source]); newYs.append(ys[source])
            if !headings.isEmpty { newHeadings.append(headings[source]) }
            position += step
        }
        xs = newXs; ys = newYs; headings = newHeadings
        logWeights = [Double](repeating: 0, count: count)
    }

    /// Two independent standard normal numbers (Box–Muller).
    private mutating func gaussianPair() -> (Double, Double) {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &generator)
        let v = Double.random(in: 0..<1, using: &generator)
        let radius = (-2 * log(u)).squareRoot()
        return (radius * cos(2 * .pi * v), radius * sin(2 * .pi * v))
    }
}
