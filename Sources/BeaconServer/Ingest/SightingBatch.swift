import BeaconGateway
import BeaconKit
import Foundation

/// The server's checks of the gateway wire type `SightingBatch` (BeaconGateway). The server
/// remembers each gateway's last ``RecentSequences/capacity`` sequences, so a retried batch is
/// not counted twice.
extension SightingBatch {
    /// The largest sequence accepted: the largest integer a JSON number carries exactly
    /// (2^53 − 1), and room for a millisecond clock for 285,000 years.
    public static let maximumSequence = 9_007_199_254_740_991

    /// Checks what JSON types alone cannot: sequences are in 0…2^53 − 1, times are within
    /// `window` of the server's clock `now`, receivers are short, and RSSI is in ``rssiRange``.
    public func validate(now: Double, window: SightingTimeWindow = .default) throws(ServerInputError) {
        if let sequence, !(0...Self.maximumSequence).contains(sequence) {
            throw ServerInputError(field: "sequence", reason: "expected a sequence number in 0…\(Self.maximumSequence), found \(sequence)")
        }
        let earliest = max(0, now - window.past), latest = now + window.future
        for (index, sighting) in sightings.enumerated() {
            guard sighting.time.isFinite, sighting.time >= earliest, sighting.time <= latest else {
                throw ServerInputError(field: "sightings[\(index)].time",
                                       reason: "expected seconds since 1970 within \(window) of the server's clock (\(Self.iso8601(earliest)) to \(Self.iso8601(latest))), found \(sighting.time)")
            }
            guard sighting.receiver.utf8.count <= 200 else {
                throw ServerInputError(field: "sightings[\(index)].receiver", reason: "expected at most 200 bytes, found \(sighting.receiver.utf8.count)")
            }
            if let rssi = sighting.rssi, !Self.rssiRange.contains(Int(rssi)) {
                throw ServerInputError(field: "sightings[\(index)].rssi", reason: "expected dBm in -127…20, or null when not available; found \(rssi)")
            }
        }
    }

    private static func iso8601(_ time: Double) -> String {
        Date(timeIntervalSince1970: time).formatted(.iso8601)
    }
}

/// How far a sighting's time may be from the server's clock. A gateway's clock runs a little
/// fast or slow, and a gateway that was offline uploads what it buffered; beyond that a time
/// is a broken clock or a hostile client, and would move the gateway's engine to a time no
/// later sighting can follow.
public struct SightingTimeWindow: Sendable, Hashable, CustomStringConvertible {
    /// Seconds a sighting may be ahead of the server.
    public var future: Double
    /// Seconds a sighting may be behind the server.
    public var past: Double

    public init(future: Double, past: Double) {
        self.future = max(0, future)
        self.past = max(0, past)
    }

    /// Five minutes ahead, seven days behind.
    public static let `default` = SightingTimeWindow(future: 300, past: 7 * 86_400)

    public var description: String { "\(Int(future)) s ahead and \(Int(past)) s behind" }
}

extension SightingBatch {
    /// Names the first out-of-range number of a batch that failed to decode, reading it again
    /// loosely. Only runs on the error path, so valid batches are decoded once.
    static func diagnose(_ data: Data) -> ServerInputError? {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        if let issue = check(root["sequence"], 0...maximumSequence, field: "sequence") { return issue }
        guard let sightings = root["sightings"] as? [Any] else { return nil }
        for (index, item) in sightings.enumerated() {
            guard let sighting = item as? [String: Any] else { continue }
            if let issue = check(sighting["rssi"], rssiRange, field: "sightings[\(index)].rssi") { return issue }
            guard let frame = sighting["frame"] as? [String: Any] else { continue }
            for (key, range) in [("major", 0...65535), ("minor", 0...65535), ("measuredPower", -128...127), ("txPowerAt0m", -128...127), ("companyID", 0...65535)] {
                if let issue = check(frame[key], range, field: "sightings[\(index)].frame.\(key)") { return issue }
            }
        }
        return nil
    }

    /// A JSON number that is not an integer in `range` (the decoder's own error names no field
    /// for it); nil for anything else, which the decoder's error describes well enough.
    static func check(_ value: Any?, _ range: ClosedRange<Int>, field: String) -> ServerInputError? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double == double.rounded(), double >= Double(range.lowerBound), double <= Double(range.upperBound) else {
            return ServerInputError(field: field, reason: "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(number)")
        }
        return nil
    }
}
