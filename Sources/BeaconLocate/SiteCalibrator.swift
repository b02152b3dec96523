import Foundation

/// What calibration found for a site.
public struct SiteCalibration: Sendable, Hashable, Codable {
    public var exponent: Double
    /// RSSI at 1 m by beacon id, in dBm.
    public var beaconPower: [String: Double]
    /// Gain offsets by receiver name, in dB; they average to zero over the receivers.
    public var receiverGain: [String: Double]
    /// Robust spread (1.4826 × median absolute deviation) of the link residuals, dB.
    public var residualSpread: Double
    /// How many distinct beacon–receiver–distance links the fit used.
    public var links: Int

    /// The model with these fitted values in place of the configured ones.
    public func applied(to model: PathLossModel) -> PathLossModel {
        var model = model
        model.exponent = exponent
        model.beaconPower.merge(beaconPower) { _, fitted in fitted }
        model.receiverGain.merge(receiverGain) { _, fitted in fitted }
        return model
    }
}

/// Fits the log-distance model to sightings at known distances: fixed receivers hearing fixed
/// beacons, or survey scans at known spots. Solves `rssi = P_beacon + G_receiver − 10·n·log10(d)`
/// by iteratively reweighted least squares with Huber weights, so a link behind a metal shelf
/// does not bend the exponent. Keeps the last readings of every link (a link is a beacon, a
/// receiver and a distance) and fits their medians, so it can be fed for ever in bounded memory
/// and refitted whenever wanted.
public struct SiteCalibrator: Sendable, Hashable {
    public static let maximumLinks = 50_000
    /// Receivers a fit takes: the exponent and the gains are solved densely (cubic in their
    /// number), the beacons' powers one by one, so beacons are bounded by ``maximumLinks`` only.
    public static let maximumReceivers = 500
    public static let readingsPerLink = 64

    struct LinkKey: Hashable, Sendable {
        var beacon: String
        var receiver: String
        var centimetres: Int
    }

    struct LinkReadings: Hashable, Sendable {
        var values: [Double] = []
        var next = 0

        mutating func add(_ value: Double) {
            if values.count < SiteCalibrator.readingsPerLink {
                values.append(value)
            } else {
                values[next] = value
                next = (next + 1) % SiteCalibrator.readingsPerLink
            }
        }

        var median: Double {
            let sorted = values.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }

    private var links: [LinkKey: LinkReadings] = [:]
    /// Powers to fall back on (configured or advertised), which also gently anchor beacons
    /// seen at a single distance, where power and exponent cannot be told apart.
    public var priorPower: [String: Double]
    public var defaultPower: Double
    public var priors: Priors
    /// Readings refused because the link table was full.
    public private(set) var dropped = 0

    public init(priorPower: [String: Double] = [:], defaultPower: Double = -59, priors: Priors = .weak) {
        self.priorPower = priorPower
        self.defaultPower = defaultPower
        self.priors = priors
    }

    /// How strongly the fit holds the exponent near 2 and each beacon's power near its prior,
    /// each as the weight of one link's reading: (a link's spread / the prior's spread)².
    public struct Priors: Sendable, Hashable {
        public var exponentWeight: Double
        public var powerWeight: Double

        public init(exponentWeight: Double, powerWeight: Double) {
            self.exponentWeight = exponentWeight.isFinite ? max(0, exponentWeight) : 0
            self.powerWeight = powerWeight.isFinite ? max(0, powerWeight) : 0
        }

        /// Barely there: a survey's hundreds of links at many distances decide alone.
        public static let weak = Priors(exponentWeight: 0.01, powerWeight: 0.01)
        /// A site's fixed links alone: each keeps its own static shadowing, they span few
        /// distances, and a beacon's power trades off against the exponent, so each power is
        /// held to its advertised value ± 4 dB (a link's spread taken as 4 dB). Weakly held,
        /// office.json's fixed links fit an exponent of 1.43 for the scenario's 2.20, and the
        /// server's tags were in the right room 82 % of seconds instead of 96 %
        /// (docs/evaluation.md, fourteenth round). The exponent stays free: holding it too
        /// bent clean fits without helping the rooms.
        public static let fixedLinks = Priors(exponentWeight: 0.01, powerWeight: 1)
    }

    /// Adds one reading at a known distance (metres, from the beacon to the receiver's antenna).
    public mutating func add(beacon: String, receiver: String, distance: Double, rssi: Double) {
        guard distance.isFinite, rssi.isFinite, distance > 0.01, distance < 10_000 else { return }
        let key = LinkKey(beacon: beacon, receiver: receiver, centimetres: Int((distance * 100).rounded()))
        if links[key] == nil && links.count >= Self.maximumLinks {
            dropped += 1
            return
        }
        links[key, default: LinkReadings()].add(rssi)
    }

    public var linkCount: Int { links.count }

    /// The current fit; nil until the links span at least two distances, or with more than
    /// ``maximumReceivers`` receivers.
    public func fit() -> SiteCalibration? {
        let keys = links.keys.sorted { ($0.beacon, $0.receiver, $0.centimetres) < ($1.beacon, $1.receiver, $1.centimetres) }
        guard Set(keys.map(\.centimetres)).count >= 2 else { return nil }
        let beacons = Array(Set(keys.map(\.beacon))).sorted()
        let receivers = Array(Set(keys.map(\.receiver))).sorted()
        let beaconIndex = Dictionary(uniqueKeysWithValues: beacons.enumerated().map { ($1, $0) })
        let receiverIndex = Dictionary(uniqueKeysWithValues: receivers.enumerated().map { ($1, $0) })
        // Parameters: [n, P_0…P_B-1, G_0…G_R-1].
        let parameterCount = 1 + beacons.count + receivers.count
        guard receivers.count <= Self.maximumReceivers else { return nil }
        let rows = keys.map { key in
            LinkRow(beacon: beaconIndex[key.beacon]!, receiver: receiverIndex[key.receiver]!,
                    logDistance: log10(Double(key.centimetres) / 100), rssi: links[key]!.median)
        }
        let priorPowers = beacons.map { priorPower[$0] ?? defaultPower }
        var weights = [Double](repeating: 1, count: rows.count)
        var solution = [Double](repeating: 0, count: parameterCount)
        var spread = 0.0
        for _ in 0..<10 {
            guard let solved = Self.solveStep(rows: rows, weights: weights, receivers: receivers.count, priorPowers: priorPowers, priors: priors) else { return nil }
            solution = solved
            let residuals = rows.map { row in
                row.rssi - (solution[1 + row.beacon] + solution[1 + beacons.count + row.receiver] - 10 * solution[0] * row.logDistance)
            }
            let absolute = residuals.map(abs).sorted()
            spread = max(0.5, 1.4826 * absolute[absolute.count / 2])
            let threshold = 1.345 * spread
            weights = residuals.map { abs($0) <= threshold ? 1 : threshold / abs($0) }
        }
        return SiteCalibration(
            exponent: solution[0],
            beaconPower: Dictionary(uniqueKeysWithValues: beacons.enumerated().map { ($1, solution[1 + $0]) }),
            receiverGain: Dictionary(uniqueKeysWithValues: receivers.enumerated().map { ($1, solution[1 + beacons.count + $0]) }),
            residualSpread: spread, links: rows.count)
    }

    /// One link's median reading, by index into the fit's beacons and receivers.
    struct LinkRow: Hashable, Sendable {
        var beacon: Int
        var receiver: Int
        var logDistance: Double
        var rssi: Double
    }

    /// Gain offsets are held to sum to zero with this weight.
    static let gainSumWeight = 100.0

    /// One weighted least-squares step: the parameters `[n, P_0…P_B-1, G_0…G_R-1]` minimising
    /// Σ w·(rssi − P_b − G_r + 10·n·log10 d)² plus the priors. Each link involves one beacon,
    /// so the beacons' powers are eliminated first (their block of the normal equations is
    /// diagonal), leaving a dense system in the exponent and the gains alone; then each power
    /// follows from its own links. A site of a thousand beacons heard by ten gateways solves 11
    /// unknowns instead of 1,011 (dense elimination of all of them took seconds).
    static func solveStep(rows: [LinkRow], weights: [Double], receivers: Int, priorPowers: [Double], priors: Priors) -> [Double]? {
        let beacons = priorPowers.count
        // The reduced unknowns: 0 the exponent, 1 + r receiver r's gain.
        let size = 1 + receivers
        var reduced = [Double](repeating: 0, count: size * size)
        var reducedRHS = [Double](repeating: 0, count: size)
        // Per beacon: its diagonal entry, its right-hand side and its coupling to the reduced
        // unknowns (sparse: the exponent and the receivers that hear it).
        var diagonal = priorPowers.map { _ in priors.powerWeight }
        var beaconRHS = priorPowers.map { $0 * priors.powerWeight }
        var coupling = [[Int: Double]](repeating: [:], count: beacons)
        for (index, row) in rows.enumerated() {
            let weight = weights[index]
            let slope = -10 * row.logDistance
            let gain = 1 + row.receiver
            reduced[0] += weight * slope * slope
            reduced[gain * size + gain] += weight
            reduced[gain] += weight * slope
            reduced[gain * size] += weight * slope
            reducedRHS[0] += weight * slope * row.rssi
            reducedRHS[gain] += weight * row.rssi
            diagonal[row.beacon] += weight
            beaconRHS[row.beacon] += weight * row.rssi
            coupling[row.beacon][0, default: 0] += weight * slope
            coupling[row.beacon][gain, default: 0] += weight
        }
        reduced[0] += priors.exponentWeight
        reducedRHS[0] += 2 * priors.exponentWeight
        for i in 1..<size { for j in 1..<size { reduced[i * size + j] += gainSumWeight } }
        var couplings: [[(Int, Double)]] = []
        couplings.reserveCapacity(beacons)
        for beacon in 0..<beacons {
            guard diagonal[beacon] > 1e-12 else { return nil }
            // In index order: a dictionary's order differs between processes, and so would the
            // last bits of the sums.
            let entries = coupling[beacon].sorted { $0.key < $1.key }
            couplings.append(entries)
            let inverse = 1 / diagonal[beacon]
            for (i, a) in entries {
                reducedRHS[i] -= a * beaconRHS[beacon] * inverse
                for (j, b) in entries { reduced[i * size + j] -= a * b * inverse }
            }
        }
        guard let rest = solve(reduced, reducedRHS, size: size) else { return nil }
        var solution = [Double](repeating: 0, count: 1 + beacons + receivers)
        solution[0] = rest[0]
        for receiver in 0..<receivers { solution[1 + beacons + receiver] = rest[1 + receiver] }
        for beacon in 0..<beacons {
            let coupled = couplings[beacon].reduce(0) { $0 + $1.1 * rest[$1.0] }
            solution[1 + beacon] = (beaconRHS[beacon] - coupled) / diagonal[beacon]
        }
        return solution
    }

    /// Gaussian elimination with partial pivoting on a dense square system; nil when singular.
    static func solve(_ matrix: [Double], _ vector: [Double], size: Int) -> [Double]? {
        var a = matrix, b = vector
        for column in 0..<size {
            var pivot = column
            for row in column + 1..<size where abs(a[row * size + column]) > abs(a[pivot * size + column]) { pivot = row }
            guard abs(a[pivot * size + column]) > 1e-12 else { return nil }
            if pivot != column {
                for k in 0..<size { a.swapAt(column * size + k, pivot * size + k) }
                b.swapAt(column, pivot)
            }
            let diagonal = a[column * size + column]
            for row in column + 1..<size {
                let factor = a[row * size + column] / diagonal
                guard factor != 0 else { continue }
                for k in column..<size { a[row * size + k] -= factor * a[column * size + k] }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: size)
        for row in stride(from: size - 1, through: 0, by: -1) {
            var sum = b[row]
            for k in row + 1..<size { sum -= a[row * size + k] * x[k] }
            x[row] = sum / a[row * size + row]
        }
        return x
    }
}
