import BeaconKit
import BeaconLocate
import BeaconServer
import Foundation

/// Issue 10: the server's position tracking at 1,000 carried beacons × 10 fixed gateways. A
/// 50 m × 20 m floor of four rooms; every gateway posts a batch every 0.5 s with one packet of
/// every carried beacon it hears (within 25 m) and of the 8 fixed beacons, so one simulated
/// second is 20 batches, about 18,000 sightings and 1,000 fixes. The same batches go (1) into a
/// `SiteTracker` alone, (2) through `ProximaServer.accept` (the path of `POST /v1/sightings`
/// after JSON decoding) on SQLite for a site without a map, and (3) with the map, so (3) − (2)
/// is what tracking adds to ingestion.
enum PositionBenchmark {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let carriedBeacons = 1_000
    static let gatewayCount = 10
    static let seconds = 20

    static let mapJSON: String = {
        var rooms: [String] = []
        var walls: [String] = []
        for index in 0..<4 {
            let left = Double(index) * 12.5, right = left + 12.5
            rooms.append(#"{"name":"room \#(index + 1)","polygon":[{"x":\#(left),"y":0},{"x":\#(right),"y":0},{"x":\#(right),"y":20},{"x":\#(left),"y":20}]}"#)
            if index > 0 {
                walls.append(#"{"from":{"x":\#(left),"y":0},"to":{"x":\#(left),"y":9},"attenuation":5}"#)
                walls.append(#"{"from":{"x":\#(left),"y":11},"to":{"x":\#(left),"y":20},"attenuation":5}"#)
            }
        }
        let doors = (1..<4).map { #"{"name":"door \#($0)","position":{"x":\#(Double($0) * 12.5),"y":10}}"# }
        let beacons = (0..<8).map { index in
            #"{"name":"fixed \#(index)","major":9,"minor":\#(index),"position":{"x":\#(3 + Double(index % 4) * 12.5),"y":\#(index < 4 ? 1 : 19)},"measuredPower":-59}"#
        }
        let receivers = gatewayPositions.enumerated().map { #"{"name":"gw-\#($0.offset)","position":{"x":\#($0.element.x),"y":\#($0.element.y)}}"# }
        return #"{"name":"bench floor","uuid":"\#(uuid.uuidString)","venue":{"width":50,"height":20,"walls":[\#(walls.joined(separator: ","))]},"rooms":[\#(rooms.joined(separator: ","))],"doors":[\#(doors.joined(separator: ","))],"beacons":[\#(beacons.joined(separator: ","))],"receivers":[\#(receivers.joined(separator: ","))]}"#
    }()

    static let gatewayPositions: [Position] = (0..<gatewayCount).map { index in
        Position(x: 5 + Double(index % 5) * 10, y: index < 5 ? 5 : 15)
    }

    struct Batch {
        var gateway: Int
        var sightings: [Sighting]
    }

    /// Batches in posting order; sighting times start at `start`.
    /// `count` walkers at random spots of the floor.
    static func walkers(_ count: Int, generator: inout SplitMix64) -> [Position] {
        (0..<count).map { _ in Position(x: Double.random(in: 0...50, using: &generator), y: Double.random(in: 0...20, using: &generator)) }
    }

    /// Each walker's step of up to a metre each way, kept on the floor.
    static func step(_ positions: inout [Position], generator: inout SplitMix64) {
        for index in positions.indices {
            positions[index].x = min(50, max(0, positions[index].x + Double.random(in: -1...1, using: &generator)))
            positions[index].y = min(20, max(0, positions[index].y + Double.random(in: -1...1, using: &generator)))
        }
    }

    /// The benchmark's radio: log-distance (n = 2.2) with the map's walls and ±4 dB, heard
    /// within 25 m down to −100 dBm.
    static func rssi(_ from: Position, _ to: Position, map: SiteMap, generator: inout SplitMix64) -> Int8? {
        let d2 = (from.x - to.x) * (from.x - to.x) + (from.y - to.y) * (from.y - to.y)
        guard d2 < 625 else { return nil }
        let value = PathLossModel(exponent: 2.2).expectedRSSI(power: -59, squaredDistance: d2) - map.wallLoss(from: from, to: to)
            + Double.random(in: -4...4, using: &generator)
        return value < -100 ? nil : Int8(value.rounded())
    }

    static func batches(map: SiteMap, start: Double) -> [Batch] {
        var generator = SplitMix64(seed: 42)
        var positions = walkers(carriedBeacons, generator: &generator)
        func rssi(_ from: Position, _ to: Position, _ generator: inout SplitMix64) -> Int8? {
            Self.rssi(from, to, map: map, generator: &generator)
        }
        var result: [Batch] = []
        for half in 0..<(seconds * 2) {
            if half % 2 == 0 { step(&positions, generator: &generator) }
            for gateway in 0..<gatewayCount {
                let at = gatewayPositions[gateway]
                var sightings: [Sighting] = []
                let base = start + Double(half) * 0.5 + Double(gateway) * 0.01
                for (index, beacon) in map.beacons.enumerated() {
                    guard let value = rssi(beacon.position, at, &generator) else { continue }
                    sightings.append(Sighting(time: base, receiver: "gw-\(gateway)", address: BluetoothAddress(rawValue: UInt64(100_000 + index)), rssi: value,
                                              frame: .iBeacon(IBeaconFrame(identity: beacon.identity!, measuredPower: MeasuredPower(-59)))))
                }
                for (index, position) in positions.enumerated() {
                    guard let value = rssi(position, at, &generator) else { continue }
                    let identity = BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(index))
                    sightings.append(Sighting(time: base + Double(index) * 0.0004, receiver: "gw-\(gateway)", address: BluetoothAddress(rawValue: UInt64(index)),
                                              rssi: value, frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(-59)))))
                }
                result.append(Batch(gateway: gateway, sightings: sightings))
            }
        }
        return result
    }

    static let phoneCount = 200

    /// `phoneCount` phones walking the floor, each posting every half second a batch of what
    /// it hears of the 8 fixed beacons, after the fixed gateways' batches of the fixed beacons
    /// (which calibrate the site): the phones' rooms with and without particles.
    static func phoneBatches(map: SiteMap, start: Double) -> [(gateway: String, sightings: [Sighting])] {
        var generator = SplitMix64(seed: 43)
        var positions = walkers(phoneCount, generator: &generator)
        var result: [(gateway: String, sightings: [Sighting])] = []
        for half in 0..<(seconds * 2) {
            if half % 2 == 0 { step(&positions, generator: &generator) }
            let base = start + Double(half) * 0.5
            let listeners = gatewayPositions.enumerated().map { ("gw-\($0.offset)", $0.element) }
                + positions.enumerated().map { ("phone-\($0.offset)", $0.element) }
            for (offset, listener) in listeners.enumerated() {
                var sightings: [Sighting] = []
                for (index, beacon) in map.beacons.enumerated() {
                    guard let value = rssi(beacon.position, listener.1, map: map, generator: &generator) else { continue }
                    sightings.append(Sighting(time: base + Double(offset) * 0.0001, receiver: listener.0, address: BluetoothAddress(rawValue: UInt64(100_000 + index)),
                                              rssi: value, frame: .iBeacon(IBeaconFrame(identity: beacon.identity!, measuredPower: MeasuredPower(-59)))))
                }
                result.append((listener.0, sightings))
            }
        }
        return result
    }

    /// A scan every metre of the floor with one reading per entry of `others` heard (by its
    /// index): a phone at the spot hearing beacons at `others`, or, `tagAtSpot`, a tag at the
    /// spot heard by receivers at `others`.
    static func surveyScans(map: SiteMap, seed: UInt64, others: [Position], tagAtSpot: Bool) -> [SurveyPoint] {
        var generator = SplitMix64(seed: seed)
        var scans: [SurveyPoint] = []
        for x in stride(from: 0.5, to: map.width, by: 1) {
            for y in stride(from: 0.5, to: map.height, by: 1) {
                let spot = Position(x: x, y: y)
                let readings = others.indices.compactMap { index in
                    (tagAtSpot ? rssi(spot, others[index], map: map, generator: &generator) : rssi(others[index], spot, map: map, generator: &generator))
                        .map { Reading(beacon: index, rssi: Double($0)) }
                }
                if !readings.isEmpty { scans.append(SurveyPoint(position: spot, readings: readings)) }
            }
        }
        return scans
    }

    static func run() async throws {
        let map = try SiteMap.decode(Data(mapJSON.utf8))
        let start = (Date().timeIntervalSince1970 - 3_600).rounded(.down)
        let work = batches(map: map, start: start)
        let sightings = work.reduce(0) { $0 + $1.sightings.count }
        print("\(work.count) batches, \(sightings) sightings, \(seconds) s of \(carriedBeacons) carried beacons × \(gatewayCount) gateways")

        // A room-only scanner on the map puts carried beacons on room presence instead of the
        // room decider (never heard here): the two rules' costs compared in one run.
        var scannerMap = map
        scannerMap.receivers.append(MappedReceiver(name: "room scanner", room: map.rooms[0].name))
        // A tag survey every metre of the floor: the carried beacons' decider then searches
        // its fingerprints every cycle (linear in the scans).
        var tagSurveyedMap = map
        tagSurveyedMap.tagSurvey = surveyScans(map: map, seed: 44, others: gatewayPositions, tagAtSpot: true)
            .map { TagSurveyPoint(position: $0.position, measuredPower: -59, readings: $0.readings) }
        let clock = ContinuousClock()
        for (label, trackedMap) in [("room decider", map), ("room presence", scannerMap),
                                    ("room decider, map with a tag survey of \(tagSurveyedMap.tagSurvey.count) scans", tagSurveyedMap)] {
            var tracker = SiteTracker(map: trackedMap)
            let began = clock.now
            var changes = 0
            for batch in work { changes += tracker.receive(batch.sightings, gateway: "gw-\(batch.gateway)").count }
            changes += tracker.advance(to: start + Double(seconds) + 1).count
            let elapsed = began.duration(to: clock.now).seconds
            print(String(format: "tracker alone, %@: %.0f batches/s, %.0f fixes/s, %.0f sightings/s (%d fixes, %d room changes, %d subjects, calibration n = %.2f)",
                         label, Double(work.count) / elapsed, Double(tracker.fixCount) / elapsed, Double(sightings) / elapsed, tracker.fixCount, changes,
                         tracker.subjectCount, tracker.calibration?.exponent ?? .nan))
        }

        // A survey every metre of the floor (what an operator's map may carry): the phones get
        // a second fit, made when the map is uploaded and refitted with the fixed links.
        var surveyedMap = map
        surveyedMap.survey = surveyScans(map: map, seed: 41, others: map.beacons.map(\.position), tagAtSpot: false)
        let uploadBegan = clock.now
        let uploaded = SiteTracker(map: surveyedMap)
        print(String(format: "map with a survey of %d scans: the upload's tracker and fit took %.1f ms (phones' exponent %.2f)", surveyedMap.survey.count,
                     uploadBegan.duration(to: clock.now).seconds * 1000, uploaded.surveyCalibration?.exponent ?? .nan))

        let phoneWork = phoneBatches(map: map, start: start)
        for (label, rooms, trackedMap) in [("phones without particles", SiteTracker.Configuration().phoneRooms, map),
                                           ("phones with 300 particles each", RoomDecider.Configuration.serverPhones(particles: 300), map),
                                           ("phones with 300 particles each, map with the survey", RoomDecider.Configuration.serverPhones(particles: 300), surveyedMap)] {
            var tracker = SiteTracker(map: trackedMap, configuration: .init(phoneRooms: rooms))
            let began = clock.now
            var changes = 0
            for batch in phoneWork { changes += tracker.receive(batch.sightings, gateway: batch.gateway).count }
            changes += tracker.advance(to: start + Double(seconds) + 1).count
            let elapsed = began.duration(to: clock.now).seconds
            print(String(format: "tracker alone, %@: %.3f ms per phone and cycle, %.0f fixes/s (%d phones × %d s, %d fixes, %d room changes)",
                         label, elapsed * 1000 / Double(phoneCount * seconds), Double(tracker.fixCount) / elapsed, phoneCount, seconds,
                         tracker.fixCount, changes))
        }

        for withMap in [false, true] {
            let directory = NSTemporaryDirectory() + "proxima-bench-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let bench = try await BenchServer.start(.sqliteFile(path: directory + "/bench.sqlite"))
            let organisation = try await bench.store.createOrganisation(name: "Bench", proximityUUIDs: [uuid])
            let site = try await bench.store.createSite(NewSite(organisationID: organisation.id, name: "Bench floor", address: "", planWidth: 50, planHeight: 20))
            if withMap { _ = try await bench.store.setSiteMap(siteID: site.id, document: Data(mapJSON.utf8)) }
            var gatewayIDs: [String] = []
            for index in 0..<gatewayCount {
                gatewayIDs.append(try await bench.store.registerGateway(name: "gw-\(index)", siteID: site.id).0.id)
            }
            let began = clock.now
            var roomEvents = 0
            for (sequence, batch) in work.enumerated() {
                let result = try await bench.server.accept(SightingBatch(sequence: sequence, sightings: batch.sightings), gatewayID: gatewayIDs[batch.gateway])
                roomEvents += result.events.filter { $0.room != nil }.count
            }
            let elapsed = began.duration(to: clock.now).seconds
            let fixes = bench.server.ingestion.positions.tracker(siteID: site.id)?.fixCount ?? 0
            print(String(format: "server (SQLite), %@: %.1f batches/s, %.0f sightings/s, %.0f fixes/s (%d fixes, %d room events stored); real time needs %d batches/s",
                         withMap ? "with the map" : "no map (ingestion only)", Double(work.count) / elapsed, Double(sightings) / elapsed,
                         Double(fixes) / elapsed, fixes, roomEvents, gatewayCount * 2))
            try await bench.stop()
        }
    }
}
