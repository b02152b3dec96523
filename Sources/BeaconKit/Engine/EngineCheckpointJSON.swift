/// A beacon's checkpoint as JSON without `JSONEncoder`: the same object its `Codable`
/// conformance reads back (same keys, absent optionals left out), written directly. A server
/// writes one for every beacon a batch touched, inside the batch's transaction, where the
/// general encoder's boxing and key containers cost a tenth of the batch.
extension EngineCheckpoint.Beacon {
    /// A field whose value JSON cannot hold (a non-finite number): `JSONEncoder` refuses it too.
    public struct NonFiniteValue: Error, Hashable, CustomStringConvertible {
        public var field: String
        public var description: String { "engine checkpoint: \(field) is not a finite number" }
    }

    public func jsonText() throws(NonFiniteValue) -> String {
        var writer = CheckpointJSONWriter()
        writer.text.reserveCapacity(420)
        writer.text += "{\"identity\":{\"uuid\":\""
        writer.text += identity.uuid.uuidString
        writer.text += "\",\"major\":\(identity.major),\"minor\":\(identity.minor)}"
        writer.field("measuredPower", Int(measuredPower))
        try writer.field("lastHeard", lastHeard)
        try writer.field("exitDeadline", exitDeadline)
        try writer.field("meanGap", meanGap)
        try writer.field("gapDeviation", gapDeviation)
        try writer.field("recentDropout", recentDropout)
        try writer.field("estimate", estimate)
        try writer.field("variance", variance)
        writer.field("cycleRSSISum", Int(cycleRSSISum))
        writer.field("cycleRSSICount", Int(cycleRSSICount))
        writer.field("cyclePackets", Int(cyclePackets))
        writer.field("evidence", Int(evidence))
        writer.text += isPresent ? ",\"isPresent\":true" : ",\"isPresent\":false"
        writer.field("proximity", Int(proximity))
        writer.field("candidate", Int(candidate))
        writer.field("candidateCycles", Int(candidateCycles))
        try writer.field("evidenceGap", evidenceGap)
        try writer.field("evidencePeriod", evidencePeriod)
        try writer.field("evidenceLongestGap", evidenceLongestGap)
        try writer.field("evidenceMargin", evidenceMargin)
        try writer.field("evidenceDropout", evidenceDropout)
        writer.field("evidenceGapCount", evidenceGapCount.map(Int.init))
        try writer.field("evidenceModel", evidenceModel)
        writer.field("evidenceSinceRefresh", evidenceSinceRefresh.map(Int.init))
        writer.text += "}"
        return writer.text
    }
}

private struct CheckpointJSONWriter {
    var text = ""

    mutating func field(_ key: String, _ value: Int?) {
        guard let value else { return }
        text += ",\"\(key)\":\(value)"
    }

    /// `description` is the shortest form that reads back to the same value, as `JSONEncoder` writes it.
    mutating func field(_ key: String, _ value: (some BinaryFloatingPoint & LosslessStringConvertible)?) throws(EngineCheckpoint.Beacon.NonFiniteValue) {
        guard let value else { return }
        guard value.isFinite else { throw .init(field: key) }
        var number = value.description
        if number.hasSuffix(".0") { number.removeLast(2) }
        text += ",\"\(key)\":\(number)"
    }
}
