import Foundation
import Testing
@testable import BeaconKit

/// starksm64's two-scanner run (Room201, Room202; 39,802 real packets over 26 minutes),
/// replayed as one time-ordered stream into one engine per scanner, as a gateway deployment runs.
@Suite struct RaspberryPiRoomsTests {
    static let uuid = UUID(uuidString: "DAF246CE-8363-11E4-B116-123B93F75CBA")!
    static let scanners = ["Room201", "Room202"]
    /// README_source.md: beacon 2 stayed in Room201, beacon 3 sat on the Room201 scanner,
    /// beacon 4 on the Room202 scanner. Beacon 1 (major 14) moved.
    static let fixedBeacons: [(identity: BeaconIdentity, room: String)] = [
        (BeaconIdentity(uuid: uuid, major: 18, minor: 2), "Room201"),
        (BeaconIdentity(uuid: uuid, major: 0, minor: 3), "Room201"),
        (BeaconIdentity(uuid: uuid, major: 1, minor: 4), "Room202"),
    ]
    static let movingBeacon = BeaconIdentity(uuid: uuid, major: 14, minor: 1)

    struct Replay {
        var cycles: [String: [Int: [BeaconIdentity: Double]]] = [:]   // scanner → cycle → beacon → accuracy
        var movingEvents: [(scanner: String, event: BeaconEvent)] = []
        var start = 0.0
        var packets = 0
    }

    static func replay() throws -> Replay {
        let rows = try DataFixtures.csv("raspi-beacon-rooms/TwoScannersRun1-2015-03-03_DERIVED.csv")
        // Two scanners' streams were merged by the collector up to 942 ms out of order: sort.
        let sightings: [Sighting] = try rows.map { row in
            let identity = BeaconIdentity(uuid: uuid, major: try DataFixtures.field(row, "major"), minor: try DataFixtures.field(row, "minor"))
            let power = MeasuredPower(try DataFixtures.field(row, "calibratedPower"))
            return Sighting(time: Double(try DataFixtures.field(row, "time", as: Int64.self)) / 1000,
                            receiver: row["scannerID"] ?? "", address: BluetoothAddress(rawValue: 2),
                            rssi: try DataFixtures.field(row, "rssi"), frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: power)))
        }.sorted { $0.time < $1.time }
        var result = Replay(start: sightings[0].time, packets: sightings.count)
        var engines: [String: BeaconEngine] = [:]
        let moving = try BeaconRegion(identifier: "moving beacon", uuid: uuid, major: 14, minor: 1)
        for scanner in scanners {
            var engine = BeaconEngine()
            try engine.startMonitoring(moving)
            engine.startRanging(try BeaconRegion(identifier: "all", uuid: uuid))
            _ = engine.advance(to: result.start)   // same cycle grid for both scanners
            engines[scanner] = engine
        }
        var events: [BeaconEvent] = []
        func collect(_ scanner: String) {
            for event in events {
                if case .didRange(let beacons, _, let end) = event {
                    let cycle = Int((end - result.start).rounded())
                    for beacon in beacons where beacon.packetCount > 0 && beacon.accuracy >= 0 {
                        result.cycles[scanner, default: [:]][cycle, default: [:]][beacon.identity] = beacon.accuracy
                    }
                } else {
                    result.movingEvents.append((scanner, event))
                }
            }
            events.removeAll(keepingCapacity: true)
        }
        for sighting in sightings {
            guard engines[sighting.receiver] != nil else { throw FixtureError(message: "unknown scanner \(sighting.receiver)") }
            engines[sighting.receiver]!.receive(sighting, into: &events)
            collect(sighting.receiver)
        }
        for scanner in scanners {
            engines[scanner]!.advance(to: sightings.last!.time + 40, into: &events)
            collect(scanner)
        }
        return result
    }

    @Test func eachFixedBeaconIsNearestItsOwnScannerInAtLeast99PercentOfCycles() throws {
        let replay = try Self.replay()
        #expect(replay.packets == 39_802)
        let allCycles = Set(replay.cycles.values.flatMap(\.keys))
        for (identity, room) in Self.fixedBeacons {
            var correct = 0, decided = 0
            for cycle in allCycles {
                let estimates = Self.scanners.compactMap { scanner in
                    replay.cycles[scanner]?[cycle]?[identity].map { (scanner, $0) }
                }
                guard let nearest = estimates.min(by: { $0.1 < $1.1 }) else { continue }
                decided += 1
                if nearest.0 == room { correct += 1 }
            }
            let rate = Double(correct) / Double(decided)
            print("beacon \(identity.major).\(identity.minor) in \(room): nearest scanner correct in \(correct) of \(decided) cycles (\(String(format: "%.2f", rate * 100)) %)")
            #expect(decided > 1000, "the beacon is heard through most of the 26-minute run")
            #expect(rate >= 0.99)
        }
    }

    @Test func movingBeaconEnterAndExitEvents() throws {
        let replay = try Self.replay()
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        formatter.timeZone = TimeZone(identifier: "America/Los_Angeles")
        print("moving beacon 14.1 (times PST, and seconds from the start of the run):")
        for (scanner, event) in replay.movingEvents {
            let clock = formatter.string(from: Date(timeIntervalSince1970: event.time))
            print("  \(clock)  +\(String(format: "%7.1f", event.time - replay.start)) s  \(scanner)  \(event.kindName)")
        }
        for scanner in Self.scanners {
            let kinds = replay.movingEvents.filter { $0.scanner == scanner }.map(\.event.kindName)
            // Per scanner the events alternate enter, exit, enter, … and end outside after the run.
            #expect(!kinds.isEmpty)
            #expect(kinds.enumerated().allSatisfy { $0.element == ($0.offset.isMultiple(of: 2) ? "enter" : "exit") })
            #expect(kinds.count.isMultiple(of: 2))
        }
        // README: the beacon "first started nearest to Room201" and ends "in Room201".
        let first = try #require(replay.movingEvents.first)
        #expect(first.scanner == "Room201" && first.event.isEnter)
    }
}
