import Foundation

/// Turns a filtered RSSI and the beacon's measured power into metres.
public enum DistanceModel: Sendable, Hashable {
    /// Log-distance path loss: `d = 10^((P1m − RSSI) / (10·n))`; n = 2 is free space, indoor
    /// values run 1.6–3.5. The engine lets a beacon or a site override n.
    case logDistance(pathLossExponent: Double)
    /// AltBeacon's curve fit `d = a·(RSSI/P1m)^b + c`, with `d = ratio^10` below ratio 1.
    case curveFit(CurveFitCoefficients)
    /// bleacon's formula (Node.js): `d = 12^(1.5·(RSSI/P1m − 1))`.
    case bleacon
    /// Log-distance path loss answered as the most probable distance when the measured power,
    /// the receiver and the shadowing are uncertain (the default); see ``RobustRangingParameters``.
    case robust(RobustRangingParameters)

    /// The robust log-distance model with parameters fitted on real data: it does not need the
    /// advertised power to be right.
    public static let `default` = DistanceModel.robust(.default)
    /// Plain log-distance with n = 2, the default before issue 11: exact when the measured power
    /// is right for this receiver and the path is free space.
    public static let freeSpace = DistanceModel.logDistance(pathLossExponent: 2.0)
    /// AltBeacon's default curve (fitted on a Nexus 5).
    public static let altBeaconDefault = DistanceModel.curveFit(.nexus5)

    /// Metres, or nil when the measured power is unusable (0 or positive) or the inputs are not
    /// finite. `pathLossExponent` overrides the log-distance model's n.
    @inlinable
    public func distance(rssi: Double, measuredPower: MeasuredPower, pathLossExponent: Double? = nil) -> Double? {
        guard measuredPower.isUsableForDistance, rssi.isFinite else { return nil }
        let power = Double(measuredPower.dBm)
        let metres: Double
        switch self {
        case .logDistance(let n):
            let exponent = pathLossExponent ?? n
            guard exponent > 0 else { return nil }
            metres = pow(10, (power - rssi) / (10 * exponent))
        case .curveFit(let fit):
            let ratio = rssi / power
            metres = ratio < 1 ? pow(ratio, 10) : fit.a * pow(ratio, fit.b) + fit.c
        case .bleacon:
            metres = pow(12, 1.5 * (rssi / power - 1))
        case .robust(let parameters):
            guard let estimate = parameters.distance(loss: power - rssi, pathLossExponent: pathLossExponent) else { return nil }
            metres = estimate
        }
        return metres.isFinite && metres >= 0 ? metres : nil
    }

    /// The exponent a log-distance model (plain or robust) uses, nil for the curve fits.
    public var pathLossExponent: Double? {
        switch self {
        case .logDistance(let n): n
        case .robust(let parameters): parameters.pathLossExponent
        case .curveFit, .bleacon: nil
        }
    }
}

/// Coefficients of `d = a·(RSSI/P1m)^b + c`, from AltBeacon's `model-distance-calculations.json`.
public struct CurveFitCoefficients: Sendable, Hashable {
    public var a: Double
    public var b: Double
    public var c: Double
    public init(a: Double, b: Double, c: Double) {
        self.a = a
        self.b = b
        self.c = c
    }
    /// AltBeacon's default (Nexus 5).
    public static let nexus5 = CurveFitCoefficients(a: 0.42093, b: 6.9476, c: 0.54992)
    /// AltBeacon's earlier fit (Nexus 4).
    public static let nexus4 = CurveFitCoefficients(a: 0.89976, b: 7.7095, c: 0.111)
}

/// The distance model plus the places where a deployment knows better than the default
/// path-loss exponent: one beacon (a beacon behind glass), or one site (UUID + major, since a
/// major usually names a site).
public struct DistanceConfiguration: Sendable, Hashable {
    public var model: DistanceModel
    public var beaconExponents: [BeaconIdentity: Double]
    public var siteExponents: [SiteKey: Double]

    public struct SiteKey: Sendable, Hashable {
        public var uuid: UUID
        public var major: UInt16
        public init(uuid: UUID, major: UInt16) {
            self.uuid = uuid
            self.major = major
        }
    }

    public init(model: DistanceModel = .default, beaconExponents: [BeaconIdentity: Double] = [:],
                siteExponents: [SiteKey: Double] = [:]) {
        self.model = model
        self.beaconExponents = beaconExponents
        self.siteExponents = siteExponents
    }

    /// The exponent for this beacon: its own, else its site's, else the model's.
    public func pathLossExponent(for identity: BeaconIdentity) -> Double? {
        guard let base = model.pathLossExponent else { return nil }
        return beaconExponents[identity]
            ?? siteExponents[SiteKey(uuid: identity.uuid, major: identity.major)]
            ?? base
    }

    public func distance(rssi: Double, measuredPower: MeasuredPower, identity: BeaconIdentity) -> Double? {
        model.distance(rssi: rssi, measuredPower: measuredPower, pathLossExponent: pathLossExponent(for: identity))
    }
}
