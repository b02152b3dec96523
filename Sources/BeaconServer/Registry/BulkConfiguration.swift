import BeaconKit
import Foundation

/// One position of a site plan: what goes where, before it has an identity.
public struct PlannedPosition: Sendable, Hashable, Codable {
    public var category: Int
    public var label: String
    public var x: Double
    public var y: Double
    public var measuredPower: Int?
    public var txPower: Int?
    public var battery: String?

    public init(category: Int, label: String, x: Double, y: Double, measuredPower: Int? = nil, txPower: Int? = nil, battery: String? = nil) {
        self.category = category
        self.label = label
        self.x = x
        self.y = y
        self.measuredPower = measuredPower
        self.txPower = txPower
        self.battery = battery
    }

    public static let csvColumns = ["category", "label", "x", "y", "measured_power", "tx_power", "battery"]

    private enum CodingKeys: String, CodingKey { case category, label, x, y, measuredPower, txPower, battery }

    /// The optional fields may be left out, not sent as null (openapi.yaml, PlannedPosition).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(category: try container.decode(Int.self, forKey: .category), label: try container.decode(String.self, forKey: .label),
                  x: try container.decode(Double.self, forKey: .x), y: try container.decode(Double.self, forKey: .y),
                  measuredPower: try container.decodeOmittable(Int.self, forKey: .measuredPower),
                  txPower: try container.decodeOmittable(Int.self, forKey: .txPower),
                  battery: try container.decodeOmittable(String.self, forKey: .battery))
    }

    /// A site plan as CSV with a header (category,label,x,y[,measured_power,tx_power,battery]).
    public static func parseCSV(_ text: String) throws(ServerInputError) -> [PlannedPosition] {
        let table = try CSV.Table(text: text, required: ["category", "label", "x", "y"])
        var positions: [PlannedPosition] = []
        for row in table.rows.indices {
            guard let category = try table.int("category", row: row) else {
                throw ServerInputError(field: "line \(row + 2), column category", reason: "expected a category in 0…65, found none")
            }
            positions.append(PlannedPosition(
                category: category, label: try table.required("label", row: row),
                x: try table.double("x", row: row) ?? 0, y: try table.double("y", row: row) ?? 0,
                measuredPower: try table.int("measured_power", row: row), txPower: try table.int("tx_power", row: row),
                battery: table.text("battery", row: row)))
        }
        return positions
    }
}

/// What one transmitter must be set to.
public struct TransmitterConfiguration: Sendable, Hashable, Codable {
    public var beaconID: Int
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var measuredPower: Int
    public var txPower: Int
    public var label: String
    public var x: Double
    public var y: Double

    /// The 30 advertising data bytes: Flags (02 01 1A) then Apple's manufacturer data
    /// (1A FF 4C 00 02 15, UUID, major, minor big-endian, measured power).
    public var advertisingData: [UInt8] {
        IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor),
                     measuredPower: MeasuredPower(Int8(clamping: measuredPower))).advertisingData()
    }

    /// The Raspberry Pi recipe (set data, parameters, enable) on one line, joined with `&&`.
    public var hcitoolLine: String {
        AdvertisingCommands.hcitoolRecipe(advertisingData: advertisingData).joined(separator: " && ")
    }

    public var advertiseLine: String {
        "proxima advertise --uuid \(uuid.uuidString) --major \(major) --minor \(minor) --power \(measuredPower)"
    }

    public static let csvColumns = ["beacon_id", "uuid", "major", "minor", "measured_power", "tx_power", "label", "x", "y"]
    var csvRow: [String] {
        [String(beaconID), uuid.uuidString, String(major), String(minor), String(measuredPower), String(txPower), label, String(x), String(y)]
    }
}

/// The output formats of bulk configuration.
public enum ConfigurationFormat: String, Sendable, CaseIterable {
    case json, csv, hcitool, advertise

    public func render(_ configurations: [TransmitterConfiguration]) throws -> String {
        switch self {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return String(decoding: try encoder.encode(configurations), as: UTF8.self) + "\n"
        case .csv:
            return CSV.render([TransmitterConfiguration.csvColumns] + configurations.map(\.csvRow))
        case .hcitool:
            // The label is the only text a caller chose; it stays inside its comment line.
            return configurations.map { ShellQuoting.comment($0.label) + "\n" + $0.hcitoolLine }.joined(separator: "\n") + "\n"
        case .advertise:
            return configurations.map(\.advertiseLine).joined(separator: "\n") + "\n"
        }
    }
}
