import BeaconFleet
import BeaconKit
import Foundation
import Testing

@Suite("Battery, telemetry and drift")
struct BatteryAndDriftTests {
    let tag = identity(1)

    func monitor(installedAt: Double? = nil, battery: String = "CR2477") -> FleetMonitor {
        FleetMonitor(beacons: [FleetBeacon(identity: tag, label: "tag", siteID: 1, battery: battery,
                                           installedAt: installedAt)],
                     gateways: [FleetGateway(name: "g", siteID: 1)], organisationUUIDs: [organisationUUID])
    }

    /// A coin cell: 3.0 V falling slowly for 50 days, then a knee to the 2.1 V cutoff at day 60.
    static func voltage(day: Double) -> Double {
        day < 50 ? 3000 - 4 * day : 2800 - 70 * (day - 50)
    }

    @Test("days left from TLM is within 20 % of the truth from three days before the end")
    func daysLeft() {
        var fleet = monitor()
        var generator = SplitMix64(seed: 5)
        let end = 60.0
        fleet.observe(iBeaconSighting(tag, at: 0, gateway: "g"))
        var checked = 0
        var transitions: [FleetTransition] = []
        // One TLM every 10 minutes with ±15 mV of noise (temperature and load).
        for step in 0..<Int(end * 144) {
            let time = Double(step) * 600
            let day = time / 86_400
            let noisy = Self.voltage(day: day) + gaussian(&generator) * 15
            fleet.observe(iBeaconSighting(tag, at: time, gateway: "g"))
            fleet.observe(tlmSighting(millivolts: UInt16(noisy.rounded()), at: time + 1, gateway: "g"))
            if step % 144 == 0 { transitions += fleet.evaluate(now: time + 2) }
            if day >= end - 3 && day < end - 0.5 && step % 36 == 0 {
                let left = fleet.health(of: tag, now: time + 2)?.batteryDaysLeft
                let truth = end - day
                #expect(left != nil)
                if let left { #expect(abs(left - truth) <= 0.2 * truth, "day \(day): \(left) days left, truth \(truth)") }
                checked += 1
            }
        }
        #expect(checked > 5)
        let battery = transitions.filter { $0.check == .battery }
        #expect(battery.map(\.to) == [.warning, .alert], "\(battery.map { "\($0.to) day \($0.time / 86_400)" })")
    }

    @Test("real Eddystone-TLM frames decode and feed the battery check")
    func realTelemetry() throws {
        // MikroTik TG-BT5 tag, from the RouterOS documentation (../shared/data/eddystone-tlm.json).
        let frames = ["0201060303aafe1116aafe20000b701549023532d802384f46",
                      "0201060303aafe1116aafe20000b6e158402353af20238576b"]
        let decoded = try frames.map { hex -> EddystoneTelemetry in
            let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
            guard case .eddystone(.tlm(let telemetry)) = try #require(BeaconFrame.decodeAll(advertisingData: bytes).first) else {
                throw DecodeFailure.notTelemetry
            }
            return telemetry
        }
        #expect(decoded.map(\.batteryMillivolts) == [2928, 2926])
        #expect(abs((decoded[0].temperatureCelsius ?? 0) - 21.285) < 0.01)
        #expect(decoded.map(\.advertisingCount) == [37_040_856, 37_042_930])
        #expect(decoded.map(\.uptimeDeciseconds) == [37_244_742, 37_246_827])
        // The tag's own count says it advertises every 100.5 ms.
        let interval = Double(decoded[1].uptimeDeciseconds - decoded[0].uptimeDeciseconds) / 10
            / Double(decoded[1].advertisingCount - decoded[0].advertisingCount)
        #expect(abs(interval - 0.1005) < 0.001)

        let tagAddress = BluetoothAddress("DC:2C:6E:F6:54:7D")!
        var fleet = monitor()
        fleet.observe(iBeaconSighting(tag, at: 0, gateway: "g", from: tagAddress))
        fleet.observe(Sighting(time: 1, receiver: "g", address: tagAddress, rssi: -60, frame: .eddystone(.tlm(decoded[0]))))
        fleet.observe(Sighting(time: 209.5, receiver: "g", address: tagAddress, rssi: -60, frame: .eddystone(.tlm(decoded[1]))))
        #expect(fleet.health(of: tag, now: 210)?.batteryMillivolts == 2926)
        // TLM from an address that never sent the identity is not attributed to it.
        var other = monitor()
        other.observe(iBeaconSighting(tag, at: 0, gateway: "g", from: address(3)))
        other.observe(Sighting(time: 1, receiver: "g", address: tagAddress, rssi: -60, frame: .eddystone(.tlm(decoded[0]))))
        #expect(other.health(of: tag, now: 2)?.batteryMillivolts == nil)
    }

    enum DecodeFailure: Error { case notTelemetry }

    @Test("impossible telemetry warns and is not believed")
    func impossibleTelemetry() {
        var fleet = monitor()
        fleet.observe(iBeaconSighting(tag, at: 0, gateway: "g"))
        fleet.observe(tlmSighting(millivolts: 65_535, at: 1, gateway: "g"))
        fleet.observe(tlmSighting(millivolts: 3000, at: 2, gateway: "g", celsius: 127.9))
        let transitions = fleet.evaluate(now: 3)
        #expect(transitions.first { $0.check == .telemetry }?.to == .warning)
        #expect(fleet.health(of: tag, now: 3)?.batteryMillivolts == nil)
        #expect(!transitions.contains { $0.check == .battery })
    }

    @Test("without telemetry, age against the battery's rated life warns")
    func ageWarning() {
        var young = monitor(installedAt: 0)
        #expect(!young.evaluate(now: 100 * 86_400).contains { $0.check == .battery })
        var old = monitor(installedAt: 0)
        let warning = old.evaluate(now: 1000 * 86_400).first { $0.check == .battery }
        #expect(warning?.to == .warning)
        #expect(warning?.reason.contains("CR2477") == true)
    }

    /// A fixed link at −62 dBm with 4 dB of packet noise, heard twice a second.
    func link(from start: Double, to end: Double, level: Double, generator: inout SplitMix64) -> [Sighting] {
        Transmission(identity: tag, interval: 0.5, gateways: ["g"], reception: 1, rssi: level, noise: 4)
            .sightings(from: start, to: end, generator: &generator)
    }

    @Test("a 6 dB drop that lasts is drift, found within 15 minutes; noise for a day is not")
    func drift() {
        var generator = SplitMix64(seed: 9)
        var shifted = monitor()
        let change = 7200.0
        let sightings = link(from: 0, to: change, level: -62, generator: &generator)
            + link(from: change, to: change + 3600, level: -68, generator: &generator)
        let transitions = run(&shifted, sightings: sightings, from: 0, to: change + 3600, reporting: { _ in ["g"] }, step: 10)
        let drift = transitions.filter { $0.check == .drift }
        #expect(drift.first?.to == .alert)
        if let found = drift.first {
            #expect(found.time > change && found.time < change + 900, "found at \(found.time - change) s")
            #expect(found.reason.contains("-62") && found.reason.contains("-68"))
        }

        var steady = monitor()
        let day = link(from: 0, to: 86_400, level: -62, generator: &generator)
        let quiet = run(&steady, sightings: day, from: 0, to: 86_400, reporting: { _ in ["g"] }, step: 60)
        #expect(!quiet.contains { $0.check == .drift }, "\(quiet.filter { $0.check == .drift })")
    }

    @Test("a noisy link heard a few times a minute raises no drift in a day")
    func sparseNoisyLinkIsNotDrift() {
        var generator = SplitMix64(seed: 13)
        var sparse = monitor()
        // One packet every 20 s at ±9 dB, then a day at 8 packets a second with ±9 dB.
        let sightings = Transmission(identity: tag, interval: 20, gateways: ["g"], reception: 1, rssi: -75, noise: 9)
            .sightings(from: 0, to: 43_200, generator: &generator)
            + Transmission(identity: tag, interval: 0.125, gateways: ["g"], reception: 1, rssi: -75, noise: 9)
            .sightings(from: 43_200, to: 129_600, generator: &generator)
        let transitions = run(&sparse, sightings: sightings, from: 0, to: 129_600, reporting: { _ in ["g"] }, step: 60)
        #expect(!transitions.contains { $0.check == .drift }, "\(transitions.filter { $0.check == .drift })")
    }
}
