import BeaconKit
import Foundation

/// `{"beacon", "distance", "position": {"x","y","z"}, "meanPower", "regions": [names]}`.
extension GroundTruth: Codable {
    enum CodingKeys: String, CodingKey { case beacon, distance, position, meanPower, regions }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(beacon: try container.decode(String.self, forKey: .beacon),
                  distance: try container.decode(Double.self, forKey: .distance),
                  receiverPosition: try container.decode(Position3D.self, forKey: .position),
                  meanPower: try container.decode(Double.self, forKey: .meanPower),
                  regions: try container.decode([String].self, forKey: .regions))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(beacon, forKey: .beacon)
        try container.encode((distance * 1000).rounded() / 1000, forKey: .distance)
        try container.encode(receiverPosition.rounded(), forKey: .position)
        try container.encode((meanPower * 10).rounded() / 10, forKey: .meanPower)
        try container.encode(regions, forKey: .regions)
    }
}

/// One JSON line: `{"sighting": {…}, "truth": {…}}`, the sighting in the codec's shared form.
extension SimulatedSighting: Codable {
    enum CodingKeys: String, CodingKey { case sighting, truth }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(sighting: try container.decode(Sighting.self, forKey: .sighting),
                  truth: try container.decode(GroundTruth.self, forKey: .truth))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sighting, forKey: .sighting)
        try container.encode(truth, forKey: .truth)
    }
}

extension Position3D {
    /// Millimetre precision, enough for output and much shorter.
    func rounded() -> Position3D {
        Position3D(x: (x * 1000).rounded() / 1000, y: (y * 1000).rounded() / 1000, z: (z * 1000).rounded() / 1000)
    }
}

extension SimulatedSighting {
    /// Unix time at which simulated time 0 is placed in capture files: 2024-01-01T00:00:00Z, so
    /// that btmon and Wireshark show a plausible date and replays keep the simulated offsets.
    public static let captureEpoch: Double = 1_704_067_200

    /// The LE Advertising Report a controller would have sent for this sighting: a legacy
    /// ADV_NONCONN_IND (event type 3, Core Spec Vol 4 Part E §7.7.65.2) from a random static
    /// address, carrying the frame's advertising data. Nil if the frame cannot be encoded.
    public var advertisingReport: AdvertisingReport? {
        guard let data = sighting.frame.advertisingData() else { return nil }
        return AdvertisingReport(kind: .legacy(eventType: 3), addressType: 1, address: sighting.address,
                                 rssi: sighting.rssi, data: data)
    }

    /// One JSON line (no trailing newline), keys sorted so that equal runs give equal files.
    public func jsonLine() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// A readable one-line summary for terminals.
    public var summary: String {
        let rssi = sighting.rssi.map { "\($0) dBm" } ?? "n/a"
        let frame: String
        switch sighting.frame {
        case .iBeacon(let beacon): frame = "iBeacon \(beacon.identity.major).\(beacon.identity.minor) power \(beacon.measuredPower.dBm)"
        case .eddystone(.tlm(let tlm)): frame = "Eddystone-TLM \(tlm.batteryMillivolts) mV"
        default: frame = sighting.frame.formatName
        }
        let time = String(format: "%9.3f", sighting.time)
        let distance = String(format: "%.2f", truth.distance)
        let regions = truth.regions.isEmpty ? "-" : truth.regions.joined(separator: ", ")
        return "\(time)  \(sighting.receiver)  \(sighting.address)  \(rssi)  \(frame)  | true \(distance) m from \(truth.beacon); in: \(regions)"
    }
}
