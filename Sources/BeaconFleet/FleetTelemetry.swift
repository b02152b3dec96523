import BeaconKit

/// Eddystone-TLM from a registered beacon's address: battery readings, and the advertising
/// interval from the advertising count over the uptime.
extension FleetMonitor {
    /// Values no working beacon sends: a battery outside 1.5–4.5 V (lithium primaries and two
    /// alkaline cells lie within), a temperature outside the −40…85 °C that the parts are rated
    /// for, or an interval below Bluetooth's 20 ms minimum.
    static let plausibleMillivolts: ClosedRange<UInt16> = 1500...4500
    static let plausibleCelsius: ClosedRange<Double> = -40...85

    mutating func recordTelemetry(_ telemetry: EddystoneTelemetry, beacon index: Int, at time: Double) {
        var watch = watches[index]
        defer { watches[index] = watch }
        if let celsius = telemetry.temperatureCelsius, !Self.plausibleCelsius.contains(celsius) {
            watch.badTelemetry.add(at: time, hold: settings.evidenceHold,
                                   detail: "TLM temperature \(celsius) °C is impossible; reading ignored")
            return
        }
        // 0 mV is the format's "not measured".
        guard telemetry.batteryMillivolts != 0 else { return }
        guard Self.plausibleMillivolts.contains(telemetry.batteryMillivolts) else {
            watch.badTelemetry.add(at: time, hold: settings.evidenceHold,
                                   detail: "TLM battery \(telemetry.batteryMillivolts) mV is impossible; reading ignored")
            return
        }
        watch.battery.record(millivolts: telemetry.batteryMillivolts, at: time)
        watch.interval.recordTelemetry(advertisingCount: telemetry.advertisingCount,
                                       uptimeDeciseconds: telemetry.uptimeDeciseconds)
    }
}

extension IntervalWatch {
    /// Keeps the first TLM of the current window; the next window's estimate divides the uptime
    /// by the count of advertisements since. A restart (uptime going back) starts over.
    mutating func recordTelemetry(advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        if let first = firstTelemetry, uptimeDeciseconds >= first.uptime, advertisingCount > first.count {
            let seconds = Double(uptimeDeciseconds - first.uptime) / 10
            let events = Double(advertisingCount - first.count)
            if seconds >= Self.window {
                let estimate = seconds / events
                if telemetryBaseline == nil { telemetryBaseline = estimate }
                telemetryInterval = estimate
                firstTelemetry = (advertisingCount, uptimeDeciseconds)
            }
        } else {
            firstTelemetry = (advertisingCount, uptimeDeciseconds)
        }
    }
}
