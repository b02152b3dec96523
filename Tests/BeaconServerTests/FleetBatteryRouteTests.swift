import BeaconFleet
import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /v1/fleet/battery`: a beacon's battery readings by hour, for the dashboard's trend chart.
@Suite struct FleetBatteryRouteTests {
    static func telemetry(_ time: Double, millivolts: UInt16, harness: RouterHarness) -> Sighting {
        Sighting(time: time, receiver: "door", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, rssi: -65,
                 frame: .eddystone(.tlm(EddystoneTelemetry(batteryMillivolts: millivolts, temperatureCelsius: 21,
                                                          advertisingCount: UInt32(time * 10), uptimeDeciseconds: UInt32(time * 10)))))
    }

    @Test func readingsAreHourlyMediansOfTheBeaconsTelemetry() async throws {
        try await FleetServerTests.withFleet { fleet, client in
            let harness = fleet.harness
            let mordor = harness.office.mordor.identity
            // Two hours of the gateways' clock: the iBeacon and its TLM from one address, the
            // voltage dropping by 10 mV in the second hour (with one outlier the median ignores).
            var sightings: [Sighting] = []
            let start = 7_200.0
            for minute in stride(from: 0.0, to: 120, by: 5) {
                let time = start + minute * 60
                sightings.append(harness.sighting(time, identity: mordor))
                let millivolts: UInt16 = minute < 60 ? 3_000 : (minute == 65 ? 2_500 : 2_990)
                sightings.append(Self.telemetry(time + 0.5, millivolts: millivolts, harness: harness))
            }
            fleet.clock.set(start + 7_200)
            _ = try await harness.server.accept(SightingBatch(sequence: 1, sightings: sightings), gatewayID: harness.gatewayID)

            let path = "/v1/fleet/battery?beacon=\(mordor.uuid.uuidString):\(mordor.major):\(mordor.minor)"
            try await client.execute(uri: path, method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .ok, "\(response.text)")
                let history = try response.json(BatteryHistory.self)
                #expect(history.readings.map(\.time) == [start, start + 3_600])
                #expect(history.readings.map(\.millivolts) == [3_000, 2_990])
                #expect(history.latestMillivolts == 2_990)
                #expect(history.millivoltsPerDay == nil, "less than a day of hours has no fitted slope")
            }
            // Roles: none, a gateway's, and the refusals name the field.
            try await client.execute(uri: path, method: .get, headers: harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: path, method: .get, headers: harness.headers(.gateway)) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorField == "Authorization")
            }
            for (query, status) in [("", HTTPResponse.Status.badRequest), ("?beacon=nonsense", .badRequest),
                                    ("?beacon=\(mordor.uuid.uuidString):1", .badRequest),
                                    ("?beacon=\(mordor.uuid.uuidString):9:9", .notFound)] {
                try await client.execute(uri: "/v1/fleet/battery" + query, method: .get, headers: harness.headers(.readOnly)) { response in
                    #expect(response.status == status, "\(query): \(response.text)")
                    #expect(response.errorField == "beacon", "\(query)")
                }
            }
        }
    }
}
