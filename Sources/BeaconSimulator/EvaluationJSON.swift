import BeaconKit
import Foundation

/// `proxima evaluate --json`: the whole report as one JSON object (docs/evaluation.md). Latency
/// and error summaries are ``Distribution``s (`count`, `p50`, `p90`, `p95`, `max`; `null` where
/// a value does not exist); other values that are not finite are `null` too.
public struct EvaluationJSON: Codable, Sendable, Hashable {
    public struct Air: Codable, Sendable, Hashable {
        public var advertisingEvents: Int
        public var received: Int
        public var belowSensitivity: Int
        public var collided: Int
        public var notListening: Int
        public var collisionRate: Double
    }

    public struct Monitoring: Codable, Sendable, Hashable {
        public var enterLatency: Distribution
        public var exitLatency: Distribution
        public var falseEnters: Int
        public var falseExits: Int
        public var falseEntersPerBeaconHour: Double?
        public var falseExitsPerBeaconHour: Double?
        public var falseExitsPer10kBeaconHours: Double?
        public var missedEnters: Int
        public var missedExits: Int
        /// False enters plus false exits, by receiver name.
        public var falseEventsByReceiver: [String: Int]
    }

    public struct BandError: Codable, Sendable, Hashable {
        /// "0–1 m", "1–3 m", "3–5 m", "5–10 m" or "≥10 m".
        public var band: String
        public var minimum: Double
        public var maximum: Double?
        public var error: Distribution
    }

    public struct Ranging: Codable, Sendable, Hashable {
        public var errorByBand: [BandError]
        public var overall: Distribution
        public var unknownEstimates: Int
        /// Share of ranged beacons whose reported zone is the true zone, 0…1.
        public var zoneAgreement: Double?
        /// Rows: true immediate, near, far; columns: reported unknown, immediate, near, far.
        public var confusion: [[Int]]
    }

    public struct Configuration: Codable, Sendable, Hashable {
        public var name: String
        public var monitoring: Monitoring?
        public var ranging: Ranging?
    }

    public var scenario: String
    public var duration: Double
    public var receivers: Int
    public var identities: Int
    public var regions: Int
    public var beaconHours: Double
    public var air: Air
    public var truthEnters: Int
    public var truthExits: Int
    public var configurations: [Configuration]
    /// The switched-off benchmark by reception-rate band; absent when no beacon is switched off.
    public var switchedOff: [SwitchedOffResult]?
}

extension EvaluationReport {
    public var json: EvaluationJSON {
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        let names = receiverNames ?? []
        let configurations = variants.map { variant in
            EvaluationJSON.Configuration(
                name: variant.name,
                monitoring: variant.monitoring.map { m in
                    EvaluationJSON.Monitoring(
                        enterLatency: m.enterLatency, exitLatency: m.exitLatency, falseEnters: m.falseEnters, falseExits: m.falseExits,
                        falseEntersPerBeaconHour: finite(m.falseEntersPerBeaconHour), falseExitsPerBeaconHour: finite(m.falseExitsPerBeaconHour),
                        falseExitsPer10kBeaconHours: finite(m.falseExitsPerBeaconHour * 10_000),
                        missedEnters: m.missedEnters, missedExits: m.missedExits,
                        falseEventsByReceiver: Dictionary(m.falseEventsByReceiver.map { (names.indices.contains($0.key) ? names[$0.key] : "\($0.key)", $0.value) },
                                                          uniquingKeysWith: +))
                },
                ranging: variant.ranging.map { r in
                    EvaluationJSON.Ranging(
                        errorByBand: DistanceBand.allCases.compactMap { band in
                            r.errorByBand[band].map {
                                EvaluationJSON.BandError(band: band.description, minimum: band.bounds.lower, maximum: finite(band.bounds.upper), error: $0)
                            }
                        },
                        overall: r.overall, unknownEstimates: r.unknownEstimates, zoneAgreement: finite(r.proximityAgreement),
                        confusion: r.confusion)
                })
        }
        let s = statistics
        return EvaluationJSON(
            scenario: scenarioName, duration: duration, receivers: receivers, identities: identities, regions: regions,
            beaconHours: beaconHours,
            air: .init(advertisingEvents: s.advertisingEvents, received: s.received, belowSensitivity: s.belowSensitivity,
                       collided: s.collided, notListening: s.notListening, collisionRate: s.collisionRate),
            truthEnters: truthEnters, truthExits: truthExits, configurations: configurations, switchedOff: switchedOff)
    }

    /// A decoder for ``jsonData(pretty:)``'s output.
    public static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    /// ``json`` encoded with sorted keys; infinities and NaN inside the switched-off bands
    /// become the strings "Infinity" and "NaN".
    public func jsonData(pretty: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try encoder.encode(json)
    }
}

extension DistanceBand {
    /// The band's true distances, metres: `lower ..< upper`.
    public var bounds: (lower: Double, upper: Double) {
        switch self {
        case .underOne: (0, 1)
        case .oneToThree: (1, 3)
        case .threeToFive: (3, 5)
        case .fiveToTen: (5, 10)
        case .overTen: (10, .infinity)
        }
    }
}
