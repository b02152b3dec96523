import BeaconGateway
import BeaconKit
import Foundation

/// The server's checks of the gateway wire type `SightingBatch` (BeaconGateway).
extension SightingBatch {
    /// Checks what JSON types alone cannot: times are finite seconds >= 0, receivers are short,
    /// and 127 is not a measured RSSI (HCI's "not available" travels as null).
    public func validate() throws(ServerInputError) {
        if let sequence, sequence < 0 {
            throw ServerInputError(field: "sequence", reason: "expected a sequence number >= 0, found \(sequence)")
        }
        for (index, sighting) in sightings.enumerated() {
            guard sighting.time.isFinite, sighting.time >= 0 else {
                throw ServerInputError(field: "sightings[\(index)].time", reason: "expected seconds >= 0, found \(sighting.time)")
            }
            guard sighting.receiver.utf8.count <= 200 else {
                throw ServerInputError(field: "sightings[\(index)].receiver", reason: "expected at most 200 bytes, found \(sighting.receiver.utf8.count)")
            }
            if sighting.rssi == 127 {
                throw ServerInputError(field: "sightings[\(index)].rssi", reason: "expected dBm in -128…126, or null when not available; found 127")
            }
        }
    }
}


extension SightingBatch {
    /// Names the first out-of-range number of a batch that failed to decode, reading it again
    /// loosely. Only runs on the error path, so valid batches are decoded once.
    static func diagnose(_ data: Data) -> ServerInputError? {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let sightings = root["sightings"] as? [Any] else { return nil }
        func check(_ value: Any?, _ range: ClosedRange<Int>, field: String) -> ServerInputError? {
            guard let number = value as? NSNumber else { return nil }
            let double = number.doubleValue
            guard double == double.rounded(), double >= Double(range.lowerBound), double <= Double(range.upperBound) else {
                return ServerInputError(field: field, reason: "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(number)")
            }
            return nil
        }
        for (index, item) in sightings.enumerated() {
            guard let sighting = item as? [String: Any] else { continue }
            if let issue = check(sighting["rssi"], -128...127, field: "sightings[\(index)].rssi") { return issue }
            guard let frame = sighting["frame"] as? [String: Any] else { continue }
            for (key, range) in [("major", 0...65535), ("minor", 0...65535), ("measuredPower", -128...127), ("txPowerAt0m", -128...127), ("companyID", 0...65535)] {
                if let issue = check(frame[key], range, field: "sightings[\(index)].frame.\(key)") { return issue }
            }
        }
        return nil
    }
}

/// Turns a decoding failure into "sightings[12].frame.major: expected 0…65535, found 70000".
enum DecodingFailure {
    static func describe(_ error: DecodingError) -> (field: String, reason: String) {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return (path(context.codingPath + [key]), "required field is missing")
        case .typeMismatch(let type, let context):
            return (path(context.codingPath), "expected \(describeType(type)), found another JSON type")
        case .valueNotFound(let type, let context):
            return (path(context.codingPath), "expected \(describeType(type)), found null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ("body", "not valid JSON")
            }
            return (path(context.codingPath), context.debugDescription.replacingOccurrences(of: "Number ", with: "found ")
                .replacingOccurrences(of: " is not representable in Swift.", with: ", which is out of range for the field"))
        @unknown default:
            return ("body", "could not be decoded")
        }
    }

    static func describe(type: Any.Type) -> String { describeType(type) }

    private static func describeType(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int8.Type, is UInt16.Type: "an integer"
        case is [Sighting].Type: "an array of sightings"
        default: "\(type)"
        }
    }
}
