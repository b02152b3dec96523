import BeaconKit
import Foundation

/// A scan filter in the shape of a region: UUID, UUID+major, or UUID+major+minor, parsed and
/// matched as every `UUID[:MAJOR[:MINOR]]` is (see `IdentityConstraint`).
public typealias IdentityPattern = IdentityConstraint

/// A scan filter that cannot be parsed; the error names the part that is wrong.
public typealias IdentityPatternError = IdentityInputError

extension IdentityConstraint {
    /// Whether a sighting passes a list of patterns: all pass an empty list; otherwise only
    /// iBeacons matching one of them.
    public static func admits(_ frame: BeaconFrame, patterns: [IdentityPattern]) -> Bool {
        guard !patterns.isEmpty else { return true }
        guard let identity = frame.iBeacon?.identity else { return false }
        return patterns.contains { $0.matches(identity) }
    }
}
