import BeaconFleet
import BeaconKit
import Foundation

let organisationUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
let foreignUUID = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

func identity(_ minor: UInt16, major: UInt16 = 1, uuid: UUID = organisationUUID) -> BeaconIdentity {
    BeaconIdentity(uuid: uuid, major: major, minor: minor)
}

func address(_ last: UInt8) -> BluetoothAddress {
    BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(last))
}

func iBeaconSighting(_ identity: BeaconIdentity, at time: Double, gateway: String, rssi: Int8 = -65,
                     from transmitter: BluetoothAddress = address(1), power: Int8 = -59) -> Sighting {
    Sighting(time: time, receiver: gateway, address: transmitter, rssi: rssi,
             frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(power))))
}

func tlmSighting(millivolts: UInt16, at time: Double, gateway: String, from transmitter: BluetoothAddress = address(1),
                 celsius: Double? = 21, count: UInt32 = 0, uptime: UInt32 = 0) -> Sighting {
    Sighting(time: time, receiver: gateway, address: transmitter, rssi: -65,
             frame: .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: millivolts, temperatureCelsius: celsius,
                                                       advertisingCount: count, uptimeDeciseconds: uptime))))
}

/// Feeds a beacon's packets as gateways would hear them: one advertising event every `interval`
/// seconds, each heard by each gateway with probability `reception`, RSSI with Gaussian noise.
struct Transmission {
    var identity: BeaconIdentity
    var interval: Double
    var gateways: [String]
    var reception: Double
    var rssi: Double = -65
    var noise: Double = 3
    var address: BluetoothAddress = BeaconFleetTests.address(1)

    func sightings(from start: Double, to end: Double, generator: inout SplitMix64) -> [Sighting] {
        var result: [Sighting] = []
        var time = start
        while time < end {
            for gateway in gateways where Double.random(in: 0..<1, using: &generator) < reception {
                let value = rssi + gaussian(&generator) * noise
                result.append(iBeaconSighting(identity, at: time, gateway: gateway,
                                              rssi: Int8(max(-127, min(0, value.rounded()))), from: address))
            }
            time += interval + Double.random(in: 0..<0.01, using: &generator)
        }
        return result
    }
}

func gaussian(_ generator: inout SplitMix64) -> Double {
    let u = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &generator)
    let v = Double.random(in: 0..<1, using: &generator)
    return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
}

/// Runs a monitor over time-sorted sightings, reporting every gateway every second and evaluating
/// every `step` seconds; returns every transition.
func run(_ monitor: inout FleetMonitor, sightings: [Sighting], from start: Double, to end: Double,
         reporting gateways: (Double) -> [String], step: Double = 1) -> [FleetTransition] {
    let sorted = sightings.sorted { $0.time < $1.time }
    var next = 0
    var transitions: [FleetTransition] = []
    var now = start
    while now <= end {
        while next < sorted.count && sorted[next].time <= now {
            monitor.observe(sorted[next])
            next += 1
        }
        for gateway in gateways(now) { monitor.gatewayReported(gateway, at: now) }
        transitions += monitor.evaluate(now: now)
        now += step
    }
    return transitions
}
