import Foundation

/// One beacon a pass carries: near it, Wallet shows the pass on the lock screen with its
/// relevant text.
public struct PassBeacon: Sendable, Equatable {
    public var proximityUUID: UUID
    public var major: UInt16?
    public var minor: UInt16?
    public var relevantText: String?

    public init(proximityUUID: UUID, major: UInt16? = nil, minor: UInt16? = nil, relevantText: String? = nil) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.relevantText = relevantText
    }

    /// The entry of pass.json's `beacons` array.
    public var passJSON: [String: Any] {
        var entry: [String: Any] = ["proximityUUID": proximityUUID.uuidString]
        if let major { entry["major"] = Int(major) }
        if let minor { entry["minor"] = Int(minor) }
        if let relevantText { entry["relevantText"] = relevantText }
        return entry
    }

    /// Beacons listed in a file an operator wrote: a JSON array in pass.json's own form, or CSV
    /// lines `uuid,major,minor[,relevant text]` (a header line and `#` comments are skipped).
    /// Reading stops at `limit` + 1 entries, so the caller can name the first one too many.
    public static func parse(_ data: Data, limit: Int = 1_000) throws(PassError) -> [PassBeacon] {
        let text = String(decoding: data, as: UTF8.self)
        if text.drop(while: { $0.isWhitespace }).first == "[" { return try parseJSON(data, limit: limit) }
        var beacons: [PassBeacon] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") || (index == 0 && line.lowercased().hasPrefix("uuid")) { continue }
            guard beacons.count <= limit else { break }
            let fields = line.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let place = "line \(index + 1)"
            guard let uuid = UUID(uuidString: fields[0]) else { throw PassError("\(place) uuid", "not a UUID: \"\(fields[0].prefix(40))\"") }
            var beacon = PassBeacon(proximityUUID: uuid)
            if fields.count > 1, !fields[1].isEmpty { beacon.major = try number(fields[1], field: "\(place) major") }
            if fields.count > 2, !fields[2].isEmpty { beacon.minor = try number(fields[2], field: "\(place) minor") }
            if beacon.minor != nil, beacon.major == nil { throw PassError("\(place) minor", "a minor needs a major") }
            if fields.count > 3, !fields[3].isEmpty { beacon.relevantText = fields[3] }
            beacons.append(beacon)
        }
        return beacons
    }

    static func parseJSON(_ data: Data, limit: Int) throws(PassError) -> [PassBeacon] {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: data) } catch { throw PassError("beacons", "not JSON: \(error)") }
        guard let entries = parsed as? [Any] else { throw PassError("beacons", "must be a JSON array") }
        var beacons: [PassBeacon] = []
        for (index, entry) in entries.prefix(limit + 1).enumerated() {
            let path = "beacons[\(index)]"
            guard let object = entry as? [String: Any] else { throw PassError(path, "must be an object") }
            guard let text = (object["proximityUUID"] ?? object["uuid"]) as? String, let uuid = UUID(uuidString: text) else {
                throw PassError("\(path).proximityUUID", "required, a UUID")
            }
            var beacon = PassBeacon(proximityUUID: uuid)
            for key in ["major", "minor"] {
                guard let value = object[key] else { continue }
                guard let number = value as? NSNumber, !PassValidation.isBoolean(number), let exact = UInt16(exactly: number.doubleValue) else {
                    throw PassError("\(path).\(key)", "must be an integer from 0 to 65535")
                }
                if key == "major" { beacon.major = exact } else { beacon.minor = exact }
            }
            if beacon.minor != nil, beacon.major == nil { throw PassError("\(path).minor", "a minor needs a major") }
            if let relevant = object["relevantText"] {
                guard let text = relevant as? String else { throw PassError("\(path).relevantText", "must be a string") }
                beacon.relevantText = text
            }
            beacons.append(beacon)
        }
        return beacons
    }

    static func number(_ text: String, field: String) throws(PassError) -> UInt16 {
        guard let value = UInt16(text) else { throw PassError(field, "must be an integer from 0 to 65535, found \"\(text.prefix(20))\"") }
        return value
    }
}
