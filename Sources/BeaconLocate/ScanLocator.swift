import Foundation

/// Runs one method over a sequence of scans: builds the estimator once, and keeps a particle
/// filter per receiver so each one is tracked over time.
public struct ScanLocator: Sendable {
    public let method: LocateMethod
    public let map: SiteMap
    public let anchors: AnchorSet
    private let centroid: WeightedCentroid
    private let trilateration: RobustTrilateration
    private let fingerprints: FingerprintIndex?
    private var filters: [String: ParticleFilter] = [:]
    /// The particle filters' model of the user's body (``ParticleFilter/Configuration/body``).
    public let body: BodyShadow?
    /// Particles per tracked receiver.
    public let particles: Int
    /// Whether the fingerprint fix (with a survey) weighs the particles every scan, or only
    /// tells a lost cloud where to look (``ParticleFilter/update(_:at:positionHint:recoveryHint:)``).
    /// A phone's fingerprints carry its user's body: weighed by them, its cloud follows the
    /// body across walls (docs/evaluation.md, issue 10's thirteenth round).
    public let fingerprintsWeighParticles: Bool
    /// ``GainHandling/unknown`` where no survey fitted the receivers: the strongest-four
    /// centroid, trilateration with a fitted common offset, and the uncalibrated particle
    /// filter (``ParticleFilter/Configuration/uncalibrated(particles:seed:body:)``), whose lost
    /// cloud is found again by the strongest-four centroid when there are no fingerprints.
    public let gain: GainHandling
    private let robustCentroid: WeightedCentroid
    public static let maximumTrackedReceivers = 100_000

    /// `survey` is needed for `.fingerprint` (the method gives no fixes without it).
    /// `attenuatingWalls`, `wallLosses`: see ``AnchorSet/init(map:model:attenuatingWalls:wallLosses:)``.
    public init(method: LocateMethod, map: SiteMap, model: PathLossModel, survey: [SurveyPoint] = [], attenuatingWalls: Bool = false,
                body: BodyShadow? = nil, particles: Int = ParticleFilter.Configuration.defaultParticles, fingerprintsWeighParticles: Bool = true,
                wallLosses: WallLossGrid? = nil, gain: GainHandling = .calibrated) {
        self.method = method
        self.gain = gain
        self.body = body
        self.particles = max(1, particles)
        self.fingerprintsWeighParticles = fingerprintsWeighParticles
        self.map = map
        anchors = AnchorSet(map: map, model: model, attenuatingWalls: attenuatingWalls, wallLosses: wallLosses)
        robustCentroid = WeightedCentroid(anchors: anchors, strongest: WeightedCentroid.defaultStrongest)
        centroid = gain == .unknown ? robustCentroid : WeightedCentroid(anchors: anchors)
        trilateration = RobustTrilateration(anchors: anchors, gain: gain)
        fingerprints = survey.isEmpty ? nil : FingerprintIndex(survey: survey, beaconCount: map.beacons.count)
    }

    /// A seed from the receiver's name (FNV-1a), the same in every run: `hashValue` is
    /// randomised per process.
    static func seed(for receiver: String) -> UInt64 {
        receiver.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    /// The fix for one scan from `receiver` at `time`. Readings are raw RSSI; the receiver's
    /// gain offset is taken off here.
    public mutating func locate(_ readings: [Reading], receiver: String, at time: Double) -> Fix? {
        let corrected = corrected(readings, receiver: receiver)
        switch method {
        case .centroid: return centroid.locate(corrected)
        case .trilateration: return trilateration.locate(corrected)
        case .fingerprint: return fingerprints?.locate(readings)
        case .particle:
            if filters[receiver] == nil {
                guard filters.count < Self.maximumTrackedReceivers else { return nil }
                filters[receiver] = makeFilter(for: receiver)
            }
            return filters[receiver]!.update(corrected, at: time, positionHint: hint(for: readings), recoveryHint: recoveryHint(raw: readings, corrected: corrected))
        }
    }

    /// The particle filter's fix for a receiver whose filter the caller keeps (nil before its
    /// first scan): a caller with many receivers drops a filter with its receiver, where the
    /// locator's own would stay until ``maximumTrackedReceivers``. Nil for other methods.
    ///
    /// A kept filter takes this locator's anchors, so a caller that rebuilds its locator with a
    /// new calibration keeps the cloud and weighs it with the new model.
    public func locate(_ readings: [Reading], receiver: String, at time: Double, filter: inout ParticleFilter?) -> Fix? {
        guard method == .particle else { return nil }
        let corrected = corrected(readings, receiver: receiver)
        if filter == nil {
            filter = makeFilter(for: receiver)
        } else if filter!.anchors.xs.count == anchors.xs.count {
            filter!.reanchor(anchors)
        } else {
            // Another map's filter: nothing of it applies here.
            filter = makeFilter(for: receiver)
        }
        return filter!.update(corrected, at: time, positionHint: hint(for: readings), recoveryHint: recoveryHint(raw: readings, corrected: corrected))
    }

    /// The readings without `receiver`'s gain offset.
    private func corrected(_ readings: [Reading], receiver: String) -> [Reading] {
        let gain = anchors.model.gain(of: receiver)
        return gain == 0 ? readings : readings.map { Reading(beacon: $0.beacon, rssi: $0.rssi - gain) }
    }

    private func makeFilter(for receiver: String) -> ParticleFilter {
        let seed = Self.seed(for: receiver)
        return ParticleFilter(anchors: anchors, walls: map.walls,
                              configuration: gain == .unknown ? .uncalibrated(particles: particles, seed: seed, body: body)
                                                              : .init(particles: particles, seed: seed, body: body))
    }

    /// With a survey, the fingerprint fix is a second measurement of the same walk.
    /// Not with an unknown gain: the fingerprints compare absolute RSSI, and a phone other than
    /// the surveyor's (or beacons at another power setting) sends them metres off (UJI geo:
    /// 3.9 m against the strongest-four centroid's 2.2 m), where they would drag the cloud.
    private func hint(for readings: [Reading]) -> Fix? {
        fingerprintsWeighParticles && gain == .calibrated ? fingerprints?.locate(readings) : nil
    }

    /// Where a lost cloud looks again when the fingerprints do not weigh the particles: the
    /// fingerprint fix, or without a survey robust trilateration's.
    private func recoveryHint(raw readings: [Reading], corrected: [Reading]) -> Fix? {
        if gain == .unknown { return robustCentroid.locate(corrected) }
        guard !fingerprintsWeighParticles || fingerprints == nil else { return nil }
        return fingerprints?.locate(readings) ?? trilateration.locate(corrected)
    }

    /// The particle filter's weight per room for `receiver` (``ParticleFilter/mass(in:)``,
    /// the share outside every room last), or nil if this locator is not a particle filter or
    /// has not tracked that receiver.
    public func particleMass(of receiver: String, rooms: [Room]) -> [Double]? {
        filters[receiver]?.mass(in: rooms.map(\.outline))
    }
}

extension SiteCalibrator {
    /// Adds every reading of the scans that have a truth position (``add(survey:map:heightOffset:receiver:)``).
    /// Scans without a receiver column count as one receiver, "survey".
    public mutating func add(scans: [ScanRow], map: SiteMap, heightOffset: Double) {
        for scan in scans {
            guard let truth = scan.truth else { continue }
            add(survey: SurveyPoint(position: truth, readings: scan.readings), map: map, heightOffset: heightOffset, receiver: scan.receiver ?? "survey")
        }
    }

    /// Adds each reading of a scan taken at a known spot, at the slant distance from there to
    /// the beacon (the model's height offset included) and corrected for the map's walls
    /// between: the fit models distance only, and a reading through a wall would otherwise
    /// pass for a steeper exponent.
    public mutating func add(survey point: SurveyPoint, map: SiteMap, heightOffset: Double, receiver: String = "survey") {
        for reading in point.readings where map.beacons.indices.contains(reading.beacon) {
            let beacon = map.beacons[reading.beacon]
            let horizontal = point.position.distance(to: beacon.position)
            add(beacon: beacon.id, receiver: receiver, distance: (horizontal * horizontal + heightOffset * heightOffset).squareRoot(),
                rssi: reading.rssi + map.wallLoss(from: beacon.position, to: point.position))
        }
    }
}

/// Cross-validation on labelled scans: each group (a day, say) is located with everything
/// learnt from the other groups only (fingerprints and, if asked, calibration), because scans
/// close in time are near-duplicates and a random split would flatter every method.
public struct LeaveOneGroupOut: Sendable {
    public var map: SiteMap
    public var model: PathLossModel
    public var calibrate: Bool
    /// How each group's locators treat the receivers' gain (``ScanLocator/gain``).
    public var gain: GainHandling

    public init(map: SiteMap, model: PathLossModel, calibrate: Bool, gain: GainHandling = .calibrated) {
        self.map = map
        self.model = model
        self.calibrate = calibrate
        self.gain = gain
    }

    /// Errors per method over all groups; scans without a group or truth are skipped.
    public func errors(_ scans: [ScanRow], methods: [LocateMethod]) -> [LocateMethod: [Double]] {
        let groups = Array(Set(scans.compactMap(\.group))).sorted()
        var errors: [LocateMethod: [Double]] = [:]
        for group in groups {
            let training = scans.filter { $0.group != group && $0.truth != nil }
            // In time order, so trackers see the walk as it happened.
            let testing = scans.filter { $0.group == group && $0.truth != nil }.enumerated()
                .sorted { ($0.element.time ?? Double($0.offset), $0.offset) < ($1.element.time ?? Double($1.offset), $1.offset) }
                .map(\.element)
            var groupModel = model
            if calibrate {
                var calibrator = SiteCalibrator(priorPower: Dictionary(map.beacons.compactMap { beacon in beacon.measuredPower.map { (beacon.id, $0) } },
                                                                       uniquingKeysWith: { first, _ in first }),
                                                defaultPower: model.defaultPower)
                calibrator.add(scans: training, map: map, heightOffset: model.heightOffset)
                if let fit = calibrator.fit() { groupModel = fit.applied(to: model) }
            }
            let survey = training.map { SurveyPoint(position: $0.truth!, readings: $0.readings) }
            for method in methods {
                var locator = ScanLocator(method: method, map: map, model: groupModel, survey: survey, gain: gain)
                for (index, scan) in testing.enumerated() {
                    guard let fix = locator.locate(scan.readings, receiver: scan.receiver ?? "receiver",
                                                   at: scan.time ?? Double(index)) else { continue }
                    errors[method, default: []].append(fix.position.distance(to: scan.truth!))
                }
            }
        }
        return errors
    }
}
