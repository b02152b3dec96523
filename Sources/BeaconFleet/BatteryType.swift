/// What a battery type promises: the voltage at which beacons stop, and a rated life for beacons
/// that send no telemetry. Lives are typical vendor figures for a beacon advertising every
/// 100–1000 ms at 0 dBm (Kontakt and Estimote datasheets quote 1–5 years depending on settings),
/// so they are rough; the registry's installation date against them only ever gives a warning
/// before telemetry would.
public struct BatteryType: Sendable, Hashable {
    public var name: String
    /// Below this the beacon browns out (lithium coin cells: about 2.0–2.2 V under load).
    public var cutoffMillivolts: Double
    public var ratedLifeDays: Double

    public init(name: String, cutoffMillivolts: Double, ratedLifeDays: Double) {
        self.name = name
        self.cutoffMillivolts = cutoffMillivolts
        self.ratedLifeDays = ratedLifeDays
    }

    public static let known: [String: BatteryType] = {
        let types = [
            BatteryType(name: "CR2032", cutoffMillivolts: 2100, ratedLifeDays: 365),
            BatteryType(name: "CR2450", cutoffMillivolts: 2100, ratedLifeDays: 730),
            BatteryType(name: "CR2477", cutoffMillivolts: 2100, ratedLifeDays: 1095),
            BatteryType(name: "2xAA", cutoffMillivolts: 2000, ratedLifeDays: 1825),
            BatteryType(name: "AA", cutoffMillivolts: 1000, ratedLifeDays: 1825),
            BatteryType(name: "USB", cutoffMillivolts: 0, ratedLifeDays: .infinity),
            BatteryType(name: "mains", cutoffMillivolts: 0, ratedLifeDays: .infinity),
        ]
        return Dictionary(uniqueKeysWithValues: types.map { ($0.name.lowercased(), $0) })
    }()

    /// The registry's free-text battery field, matched without case; unknown names get a coin
    /// cell's cutoff and no rated life.
    public static func named(_ name: String) -> BatteryType {
        known[name.lowercased()] ?? BatteryType(name: name, cutoffMillivolts: 2100, ratedLifeDays: .infinity)
    }
}
