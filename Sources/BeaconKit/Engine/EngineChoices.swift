/// The named settings a person picks by typing a word (command-line options, server flags,
/// configuration files), each with one spelling and one meaning wherever it is read. The
/// command-line tool only adds argument-parser conformances on top of these.

/// Text that is not one of a setting's accepted forms.
public struct ChoiceError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The setting, e.g. "exit rule".
    public var setting: String
    /// The accepted forms, e.g. "adaptive, altbeacon, ios or a positive number of seconds".
    public var expected: String
    public var found: String

    public var description: String { "\(setting): expected \(expected), found '\(found)'" }
}

/// The RSSI filters by name: `kalman`, `trimmed-mean` (AltBeacon's running average), `arma`
/// (AltBeacon's ARMA) and `none`.
public enum RSSIFilterChoice: String, NamedChoice {
    case kalman
    case trimmedMean = "trimmed-mean"
    case arma
    case none

    public static let setting = "RSSI filter"

    public var filter: RSSIFilter {
        switch self {
        case .kalman: .default
        case .trimmedMean: .altBeaconRunningAverage
        case .arma: .altBeaconARMA
        case .none: .none
        }
    }
}

/// The distance models by name: `robust` (the default: log-distance that does not trust the
/// advertised power completely), `log-distance` (their exponent is a separate number),
/// `altbeacon` (the Nexus 5 curve), `nexus4` and `bleacon`.
public enum DistanceModelChoice: String, NamedChoice {
    case robust
    case logDistance = "log-distance"
    case altBeacon = "altbeacon"
    case nexus4
    case bleacon

    public static let setting = "distance model"

    /// The model; `pathLossExponent` is the n of the log-distance models and unused by the curve fits.
    public func model(pathLossExponent: Double = 2) -> DistanceModel {
        switch self {
        case .robust:
            var parameters = RobustRangingParameters.default
            parameters.pathLossExponent = pathLossExponent
            return .robust(parameters)
        case .logDistance: return .logDistance(pathLossExponent: pathLossExponent)
        case .altBeacon: return .altBeaconDefault
        case .nexus4: return .curveFit(.nexus4)
        case .bleacon: return .bleacon
        }
    }
}

/// The exit rules by name: `evidence` (the default), `adaptive`, `altbeacon` (10 s), `ios`
/// (30 s), or a fixed delay written as a positive number of seconds.
public enum ExitRuleChoice: Sendable, Hashable, CaseIterable, LosslessStringConvertible {
    case evidence
    case adaptive
    case altBeacon
    case iOS
    case seconds(Double)

    /// The named rules; any positive number of seconds is accepted too.
    public static let allCases: [ExitRuleChoice] = [.evidence, .adaptive, .altBeacon, .iOS]

    static let expected = "evidence, adaptive, altbeacon, ios or a positive number of seconds"

    public init?(_ description: String) {
        switch description.lowercased() {
        case "evidence": self = .evidence
        case "adaptive": self = .adaptive
        case "altbeacon": self = .altBeacon
        case "ios": self = .iOS
        default:
            guard let seconds = Double(description), seconds > 0, seconds.isFinite else { return nil }
            self = .seconds(seconds)
        }
    }

    public init(parsing text: String) throws(ChoiceError) {
        guard let choice = Self(text) else { throw ChoiceError(setting: "exit rule", expected: Self.expected, found: text) }
        self = choice
    }

    public var description: String {
        switch self {
        case .evidence: "evidence"
        case .adaptive: "adaptive"
        case .altBeacon: "altbeacon"
        case .iOS: "ios"
        case .seconds(let seconds): "\(seconds)"
        }
    }

    public var rule: ExitRule {
        switch self {
        case .evidence: .default
        case .adaptive: .adaptiveDefault
        case .altBeacon: .altBeacon
        case .iOS: .iOSLike
        case .seconds(let seconds): .fixedDelay(seconds: seconds)
        }
    }

    /// The silence after which every beacon exits, or nil for the evidence and adaptive rules,
    /// whose timeout is each beacon's own.
    public var fixedDelay: Double? {
        if case .fixedDelay(let seconds) = rule { return seconds }
        return nil
    }
}

/// A setting spelled as one of a fixed list of words, case-insensitively.
public protocol NamedChoice: RawRepresentable<String>, CaseIterable, Sendable, LosslessStringConvertible {
    /// What it sets, for errors, e.g. "RSSI filter".
    static var setting: String { get }
}

extension NamedChoice {
    public init?(_ description: String) { self.init(rawValue: description.lowercased()) }

    public init(parsing text: String) throws(ChoiceError) {
        guard let choice = Self(text) else {
            let names = Self.allCases.map(\.rawValue)
            let expected = names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1] : names.joined()
            throw ChoiceError(setting: Self.setting, expected: expected, found: text)
        }
        self = choice
    }

    public var description: String { rawValue }
}
