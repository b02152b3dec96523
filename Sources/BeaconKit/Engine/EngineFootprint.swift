/// What the engine keeps per tracked beacon, measured from the live structures, for the
/// benchmark and for capacity planning (a gateway with 10,000 beacons).
public struct EngineFootprint: Sendable, Hashable, CustomStringConvertible {
    public var trackedBeacons: Int
    /// `MemoryLayout<TrackedBeacon>.stride`: reception statistics, filter, cycle sums,
    /// proximity, match references.
    public var stateStride: Int
    /// `MemoryLayout<BeaconIdentity>.stride`, kept in a parallel array.
    public var identityStride: Int
    /// The identity → index table's slots per beacon (24-byte key and index slots, at most 3/4 full).
    public var indexBytesPerBeacon: Double
    /// Region-match pool bytes per beacon (4 bytes per matched region).
    public var matchBytesPerBeacon: Double
    /// Trimmed-mean windows per beacon, only with that filter (they grow with the window).
    public var windowBytesPerBeacon: Double

    public var bytesPerBeacon: Double {
        Double(stateStride + identityStride) + indexBytesPerBeacon + matchBytesPerBeacon + windowBytesPerBeacon
    }

    public var description: String {
        "\(trackedBeacons) beacons: state \(stateStride) B + identity \(identityStride) B + index "
            + String(format: "%.1f", indexBytesPerBeacon) + " B + region matches " + String(format: "%.1f", matchBytesPerBeacon)
            + " B + windows " + String(format: "%.1f", windowBytesPerBeacon) + " B = "
            + String(format: "%.1f", bytesPerBeacon) + " B per beacon"
    }
}

extension BeaconEngine {
    public var footprint: EngineFootprint {
        let count = Swift.max(trackedBeaconCount, 1)
        let indexBytes = Double(indexCapacity * IdentityIndexTable.slotStride)
        return EngineFootprint(
            trackedBeacons: trackedBeaconCount,
            stateStride: MemoryLayout<TrackedBeacon>.stride,
            identityStride: MemoryLayout<BeaconIdentity>.stride,
            indexBytesPerBeacon: indexBytes / Double(count),
            matchBytesPerBeacon: Double(matchPoolCount * MemoryLayout<UInt32>.stride) / Double(count),
            windowBytesPerBeacon: Double(windowBytes) / Double(count))
    }
}
