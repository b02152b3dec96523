import BeaconKit
import Foundation

/// Where one gateway's messages go under the URL's prefix (docs/mqtt.md lists them):
///
/// | topic | payload | QoS, retained |
/// |---|---|---|
/// | `<prefix>/<gateway>/status` | `online` / `offline` (the will) | 1, retained |
/// | `<prefix>/<gateway>/events` | an enter/exit event as `proxima monitor --json` writes it | 1 |
/// | `<prefix>/<gateway>/regions/<region>/state` | `inside` / `outside` | 1, retained |
/// | `<prefix>/<gateway>/beacons/<beacon>/state` | the room (`home` by default) / `not_home` | 1, retained |
/// | `<prefix>/<gateway>/beacons/<beacon>/ranging` | distance, RSSI, proximity JSON, about 1 Hz | 0 |
/// | `<prefix>/<gateway>/beacons/<beacon>/battery` | `{"voltage","millivolts","time"}` from the beacon's Eddystone-TLM | 1, retained |
public struct BeaconTopics: Sendable, Hashable {
    public var prefix: String
    /// The gateway's name as one topic level (see ``topicLevel(_:)``).
    public var gateway: String

    public init(prefix: String, gateway: String) {
        self.prefix = prefix
        self.gateway = Self.topicLevel(gateway)
    }

    public var base: String { "\(prefix)/\(gateway)" }
    public var status: String { "\(base)/status" }
    public var events: String { "\(base)/events" }
    public func regionState(_ region: BeaconRegion) -> String { "\(base)/regions/\(Self.topicLevel(region.identifier))/state" }
    public func beaconState(_ identity: BeaconIdentity) -> String { "\(base)/beacons/\(Self.beaconLevel(identity))/state" }
    public func beaconRanging(_ identity: BeaconIdentity) -> String { "\(base)/beacons/\(Self.beaconLevel(identity))/ranging" }
    public func beaconBattery(_ identity: BeaconIdentity) -> String { "\(base)/beacons/\(Self.beaconLevel(identity))/battery" }
    /// The tracker's attributes: only what changes when it means something (identity, room,
    /// proximity zone), retained, so Home Assistant's recorder is not written every second.
    public func beaconAttributes(_ identity: BeaconIdentity) -> String { "\(base)/beacons/\(Self.beaconLevel(identity))/attributes" }

    /// `uuid-in-lower-case-major-minor`, e.g. `e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-10`.
    public static func beaconLevel(_ identity: BeaconIdentity) -> String {
        "\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
    }

    /// A name made safe as one topic level and as a Home Assistant object id: lower-case
    /// letters, digits, `_` and `-`; anything else (spaces, `/`, the wildcards `+` and `#`)
    /// becomes `-`. Never empty.
    public static func topicLevel(_ name: String) -> String {
        var result = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-" {
                result.unicodeScalars.append(scalar)
            } else if !result.hasSuffix("-") {
                result += "-"
            }
        }
        let trimmed = result.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return trimmed.isEmpty ? "unnamed" : String(trimmed.prefix(64))
    }
}
