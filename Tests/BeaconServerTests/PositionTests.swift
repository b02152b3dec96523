import BeaconKit
import BeaconLocate
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 10, part 3: a site's map, calibration, positions, rooms and routes on the server, and
/// room events on the event feed.
@Suite("Positions on the server")
struct PositionTests {
    static let uuid = Fixture.nerderyUUID

    /// Two rooms of 10 × 10 m joined by a door at (10, 5); four fixed beacons (major 100), four
    /// fixed gateways with positions, one room-only scanner, and a parking spot.
    static let mapJSON = """
    {"name": "office", "uuid": "\(uuid.uuidString)",
     "venue": {"width": 20, "height": 10,
               "walls": [{"from": {"x": 10, "y": 0}, "to": {"x": 10, "y": 4}, "attenuation": 6},
                         {"from": {"x": 10, "y": 6}, "to": {"x": 10, "y": 10}, "attenuation": 6}]},
     "rooms": [{"name": "west", "polygon": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]},
               {"name": "east", "polygon": [{"x": 10, "y": 0}, {"x": 20, "y": 0}, {"x": 20, "y": 10}, {"x": 10, "y": 10}]}],
     "doors": [{"name": "middle door", "position": {"x": 10, "y": 5}}],
     "beacons": [{"name": "b1", "major": 100, "minor": 1, "position": {"x": 2, "y": 2}, "measuredPower": -59},
                 {"name": "b2", "major": 100, "minor": 2, "position": {"x": 18, "y": 2}, "measuredPower": -59},
                 {"name": "b3", "major": 100, "minor": 3, "position": {"x": 2, "y": 8}, "measuredPower": -59},
                 {"name": "b4", "major": 100, "minor": 4, "position": {"x": 18, "y": 8}, "measuredPower": -59}],
     "receivers": [{"name": "pi-west", "position": {"x": 4, "y": 5}}, {"name": "pi-east", "position": {"x": 16, "y": 5}},
                   {"name": "pi-north", "position": {"x": 6, "y": 9}}, {"name": "pi-south", "position": {"x": 14, "y": 1}},
                   {"name": "scanner-east", "room": "east"}],
     "pointsOfInterest": [{"name": "car", "position": {"x": 18, "y": 9}}]
    }
    """

    static let map = try! SiteMap.decode(Data(mapJSON.utf8))
    static let fixedGateways = ["pi-west", "pi-east", "pi-north", "pi-south"]

    /// The log-distance model the tests' radio follows, walls included.
    static func rssi(from source: Position, to receiver: Position, power: Double = -59, exponent: Double = 2, gain: Double = 0,
                     walls: Bool = true) -> Int8 {
        let horizontal = source.distance(to: receiver)
        let slant = (horizontal * horizontal + 1).squareRoot()
        let value = power + gain - 10 * exponent * log10(slant) - (walls ? map.wallLoss(from: source, to: receiver) : 0)
        return Int8(max(-127, min(0, value.rounded())))
    }

    static func position(of gateway: String) -> Position { map.receivers.first { $0.name == gateway }!.position! }

    static func sighting(_ time: Double, _ gateway: String, _ identity: BeaconIdentity, rssi: Int8, power: Int8 = -59) -> Sighting {
        Sighting(time: time, receiver: gateway, address: BluetoothAddress(rawValue: UInt64(identity.minor) + 1), rssi: rssi,
                 frame: .iBeacon(IBeaconFrame(identity: identity, measuredPower: MeasuredPower(power))))
    }

    static func fixedBeacon(_ minor: UInt16) -> BeaconIdentity { BeaconIdentity(uuid: uuid, major: 100, minor: minor) }

    /// A site with the map and its gateways registered.
    struct Site {
        var harness: RouterHarness
        var gateways: [String: String]
        var siteID: Int { harness.office.site.id }
        var sequence = 0

        /// One batch per gateway for each second in `seconds`: five packets a second of each
        /// subject it hears. `carried` gives the carried beacon's position at a time.
        mutating func run(_ seconds: ClosedRange<Int>, carried: (BeaconIdentity, (Double) -> Position)? = nil,
                          phone: (String, Position)? = nil, exponent: Double = 2, gains: [String: Double] = [:],
                          carriedThroughWalls: Bool = true) async throws {
            for second in seconds {
                var batches: [String: [Sighting]] = [:]
                for step in 0..<5 {
                    let time = Double(second) + Double(step) * 0.2
                    for gateway in PositionTests.fixedGateways {
                        let at = PositionTests.position(of: gateway)
                        for beacon in PositionTests.map.beacons {
                            batches[gateway, default: []].append(PositionTests.sighting(time, gateway, beacon.identity!,
                                rssi: PositionTests.rssi(from: beacon.position, to: at, exponent: exponent, gain: gains[gateway] ?? 0)))
                        }
                        if let (identity, path) = carried {
                            batches[gateway, default: []].append(PositionTests.sighting(time, gateway, identity,
                                rssi: PositionTests.rssi(from: path(time), to: at, exponent: exponent, gain: gains[gateway] ?? 0,
                                                         walls: carriedThroughWalls)))
                        }
                    }
                    if let (name, at) = phone {
                        for beacon in PositionTests.map.beacons {
                            batches[name, default: []].append(PositionTests.sighting(time, name, beacon.identity!,
                                rssi: PositionTests.rssi(from: beacon.position, to: at, exponent: exponent, walls: carriedThroughWalls)))
                        }
                    }
                }
                for (gateway, sightings) in batches.sorted(by: { $0.key < $1.key }) {
                    sequence += 1
                    _ = try await harness.server.accept(SightingBatch(sequence: sequence, sightings: sightings), gatewayID: gateways[gateway]!)
                }
            }
        }
    }

    static func withSite(_ body: @Sendable (inout Site, any TestClientProtocol) async throws -> Void) async throws {
        try await RouterHarness.with { harness, client in
            var gateways: [String: String] = [:]
            for name in fixedGateways + ["scanner-east", "phone-anna"] {
                gateways[name] = try await harness.server.store.registerGateway(name: name, siteID: harness.office.site.id).0.id
            }
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/map", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(string: mapJSON)) { response in
                #expect(response.status == .ok, "\(response.text)")
            }
            var site = Site(harness: harness, gateways: gateways)
            try await body(&site, client)
        }
    }

    // MARK: The map

    @Test func mapIsStoredAndReadBackAndEachRoleIsChecked() async throws {
        try await RouterHarness.with { harness, client in
            let path = "/v1/sites/\(harness.office.site.id)/map"
            try await client.execute(uri: path, method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
            for (role, status) in [(nil, HTTPResponse.Status.unauthorized), (.readOnly, .forbidden), (.gateway, .forbidden)] as [(Role?, HTTPResponse.Status)] {
                try await client.execute(uri: path, method: .put, headers: harness.headers(role), body: ByteBuffer(string: Self.mapJSON)) { response in
                    #expect(response.status == status)
                    #expect(response.errorField == "Authorization")
                }
            }
            try await client.execute(uri: path, method: .put, headers: harness.headers(.operator), body: ByteBuffer(string: Self.mapJSON)) { response in
                #expect(response.status == .ok)
            }
            for (role, status) in [(nil, HTTPResponse.Status.unauthorized), (.gateway, .forbidden)] as [(Role?, HTTPResponse.Status)] {
                try await client.execute(uri: path, method: .get, headers: harness.headers(role)) { #expect($0.status == status) }
            }
            try await client.execute(uri: path, method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let stored = try SiteMap.decode(Data(buffer: response.body))
                #expect(stored == Self.map)
            }
            try await client.execute(uri: "/v1/sites/999/map", method: .put, headers: harness.headers(.admin), body: ByteBuffer(string: Self.mapJSON)) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    static let badMaps: [(String, String)] = [
        (#"{"venue":{"width":20,"height":10},"rooms":[{"name":"a","polygon":[{"x":0,"y":0},{"x":1,"y":0},{"x":1,"y":1},{"x":0}]}]}"#, "rooms[0].polygon[3].y"),
        (#"{"venue":{"width":20,"height":10},"beacons":[{"name":"b","position":{"x":30,"y":1}}]}"#, "beacons[0].position.x"),
        (#"{"venue":{"width":20,"height":10},"receivers":[{"name":"r","room":"nowhere"}]}"#, "receivers[0].room"),
        (#"{"venue":{"width":-1,"height":10}}"#, "venue.width"),
        (#"{"rooms":[]}"#, "venue"),
        (#"{"venue":{"width":20,"height":10},"beacons":[{"name":"b","position":{"x":1,"y":1}}],"survey":[{"position":{"x":2,"y":2},"rssi":{"c":-70}}]}"#, "survey[0].rssi"),
        (#"{"venue":{"width":20,"height":10},"receivers":[{"name":"g","position":{"x":1,"y":1}}],"tagSurvey":[{"position":{"x":2,"y":2},"rssi":{"h":-70}}]}"#, "tagSurvey[0].rssi"),
        (#"{"venue":{"width":20,"height":10},"receivers":[{"name":"g","position":{"x":1,"y":1}}],"tagSurvey":[{"position":{"x":2,"y":2},"measuredPower":5000,"rssi":{"g":-70}}]}"#, "tagSurvey[0].measuredPower"),
        ("not json", "body"),
    ]

    @Test(arguments: badMaps)
    func refusedMapsNameTheJSONPath(document: String, field: String) async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/map", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(string: document)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == field, "\(response.text)")
            }
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/map", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound, "a refused map is not stored")
            }
        }
    }

    @Test func aMapLargerThanTheLimitIsRefused() async throws {
        try await RouterHarness.with { harness, client in
            let padding = String(repeating: " ", count: SiteMap.Limits.bytes)
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/map", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(string: Self.mapJSON + padding)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorField == "body")
            }
        }
    }

    // MARK: Tracking

    @Test func roomEventsReachTheFeedWhenACarriedBeaconMovesBetweenGatewaysRooms() async throws {
        try await Self.withSite { site, client in
            let tag = site.harness.office.mordor.identity
            // West for 20 s, then east for 20 s; then only the fixed beacons are heard.
            try await site.run(100...139, carried: (tag, { $0 < 120 ? Position(x: 4, y: 4) : Position(x: 16, y: 6) }))
            try await site.run(140...160)
            let stored = try await site.harness.server.store.events(after: 0, filter: EventFilter(siteID: site.siteID))
            let rooms = stored.compactMap { event in event.room.map { "\($0.kind.rawValue) \($0.room) \($0.subject.name)" } }
            let name = TrackedSubject.beacon(tag).name
            #expect(rooms == ["roomEnter west \(name)", "roomExit west \(name)", "roomEnter east \(name)", "roomExit east \(name)"])
            let times = stored.compactMap { $0.room?.time }
            // The change follows the move after smoothing (τ = 2 s), the 4 dB lead held for 1.5 s
            // and the one-second cycles (4 s here); the exit follows 8 s of silence (one-second
            // cycles: 8 typical gaps).
            #expect(times.count == 4 && times[1] > 120 && times[1] <= 124 && times[3] > 146 && times[3] < 152, "\(times)")
            #expect(stored.first { $0.room != nil }?.label == "Bloomington Office – Conference Room: Mordor")
            try await client.execute(uri: "/v1/events?follow=false&site=\(site.siteID)", method: .get, headers: site.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                #expect(response.text.contains("event: roomEnter\ndata: {"))
                #expect(response.text.contains(#""room":"east""#))
            }
            try await client.execute(uri: "/v1/events?format=json&site=\(site.siteID)", method: .get, headers: site.harness.headers(.readOnly)) { response in
                let events = try response.json([StoredEvent].self)
                #expect(events.compactMap(\.room) == stored.compactMap(\.room))
            }
        }
    }

    /// Collects the room events of webhook deliveries.
    actor RoomHook {
        var rooms: [String] = []
        private var waiting: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        func record(_ body: [UInt8]) {
            struct Delivery: Decodable { var events: [StoredEvent] }
            guard let delivery = try? JSONDecoder().decode(Delivery.self, from: Data(body)) else { return }
            rooms += delivery.events.compactMap { $0.room.map { "\($0.kind.rawValue) \($0.room)" } }
            if let waiting, rooms.count >= waiting.count {
                waiting.continuation.resume()
                self.waiting = nil
            }
        }

        func waitForRooms(_ count: Int) async {
            guard rooms.count < count else { return }
            await withCheckedContinuation { waiting = (count, $0) }
        }
    }

    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func roomEventsAreDeliveredToWebhooks() async throws {
        let hook = RoomHook()
        let router = Hummingbird.Router()
        router.post("/hook") { request, _ -> Response in
            await hook.record(Array(buffer: try await request.body.collect(upTo: 1 << 22)))
            return Response(status: .noContent)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) })
        let serving = Task { try await app.run() }
        defer { serving.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try await Self.withSite { site, _ in
            _ = try await site.harness.server.store.addWebhook(url: "http://127.0.0.1:\(port)/hook", secret: "a-webhook-secret-of-some-length",
                                                                siteID: site.siteID)
            try await site.run(100...139, carried: (site.harness.office.mordor.identity, { $0 < 120 ? Position(x: 4, y: 4) : Position(x: 16, y: 6) }))
            // Deliveries run in the dispatcher's service: wait until the three have arrived.
            await hook.waitForRooms(3)
            // One webhook's deliveries go out one at a time, in the order the events were stored.
            #expect(await hook.rooms == ["roomEnter west", "roomExit west", "roomEnter east"])
        }
    }

    @Test func carriedBeaconsAndPhonesAreLocatedAndPutInRooms() async throws {
        try await Self.withSite { site, client in
            let tag = site.harness.office.mordor.identity
            // Trilateration does not model walls (a wall between a subject and half its anchors
            // pulls the fix away from them), so here the carried beacon's and the phone's radio
            // passes the walls unattenuated.
            try await site.run(100...110, carried: (tag, { _ in Position(x: 6, y: 3) }), phone: ("phone-anna", Position(x: 15, y: 7)),
                               carriedThroughWalls: false)
            try await client.execute(uri: "/v1/positions?site=\(site.siteID)", method: .get, headers: site.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok)
                let reply = try response.json(ProximaServer.PositionsReply.self)
                let beacon = try #require(reply.positions.first { $0.kind == "beacon" })
                #expect(beacon.major == tag.major && beacon.minor == tag.minor && beacon.room == "west" && beacon.anchors == 4)
                #expect(Position(x: beacon.x ?? 0, y: beacon.y ?? 0).distance(to: Position(x: 6, y: 3)) < 1.5, "\(beacon)")
                let phone = try #require(reply.positions.first { $0.kind == "phone" })
                #expect(phone.subject == "phone-anna" && phone.room == "east")
                #expect(Position(x: phone.x ?? 0, y: phone.y ?? 0).distance(to: Position(x: 15, y: 7)) < 1.5, "\(phone)")
                // The fixed beacons are anchors, not subjects.
                #expect(reply.positions.count == 2)
            }
            try await client.execute(uri: "/v1/rooms?site=\(site.siteID)", method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.RoomsReply.self)
                #expect(reply.rooms.map(\.name) == ["west", "east"])
                #expect(reply.rooms[0].occupants.map(\.kind) == ["beacon"])
                #expect(reply.rooms[1].occupants.map(\.subject) == ["phone-anna"])
            }
            // Directions: from the tracked beacon in the west room through the door to the car.
            let name = TrackedSubject.beacon(tag).name
            try await client.execute(uri: "/v1/route?site=\(site.siteID)&from=\(name)&to=car", method: .get, headers: site.harness.headers(.readOnly)) { response in
                #expect(response.status == .ok, "\(response.text)")
                let route = try response.json(ProximaServer.RouteReply.self)
                #expect(route.doors == ["middle door"])
                #expect(route.waypoints.last.map { $0.x == 18 && $0.y == 9 } == true)
                #expect(route.length > Position(x: 6, y: 3).distance(to: Position(x: 18, y: 9)) - 1.5)
            }
            try await client.execute(uri: "/v1/route?site=\(site.siteID)&from=phone-anna&to=2,2", method: .get, headers: site.harness.headers(.readOnly)) { response in
                let route = try response.json(ProximaServer.RouteReply.self)
                #expect(route.doors == ["middle door"])
            }
            try await client.execute(uri: "/v1/route?site=\(site.siteID)&from=3,3&to=west", method: .get, headers: site.harness.headers(.readOnly)) { response in
                let route = try response.json(ProximaServer.RouteReply.self)
                #expect(route.length == 0)
            }
        }
    }

    @Test func aNewMapStartsTheSiteAfresh() async throws {
        try await Self.withSite { site, client in
            try await site.run(100...103, carried: (site.harness.office.mordor.identity, { _ in Position(x: 6, y: 3) }))
            let uri = "/v1/positions?site=\(site.siteID)"
            try await client.execute(uri: uri, method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.PositionsReply.self)
                #expect(reply.positions.count == 1)
            }
            let renamed = Self.mapJSON.replacingOccurrences(of: #""name": "west""#, with: #""name": "west wing""#)
            try await client.execute(uri: "/v1/sites/\(site.siteID)/map", method: .put, headers: site.harness.headers(.admin),
                                     body: ByteBuffer(string: renamed)) { #expect($0.status == .ok) }
            try await client.execute(uri: uri, method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.PositionsReply.self)
                #expect(reply.positions.isEmpty)
            }
            try await site.run(104...106, carried: (site.harness.office.mordor.identity, { _ in Position(x: 6, y: 3) }))
            try await client.execute(uri: "/v1/rooms?site=\(site.siteID)", method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.RoomsReply.self)
                #expect(reply.rooms.map(\.name) == ["west wing", "east"])
                #expect(reply.rooms[0].occupants.count == 1)
            }
        }
    }

    @Test func theSiteCalibratesItselfFromItsFixedGateways() async throws {
        try await Self.withSite { site, client in
            let path = "/v1/sites/\(site.siteID)/calibration"
            try await client.execute(uri: path, method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.CalibrationReply.self)
                #expect(reply.status == "waiting")
            }
            let gains = ["pi-west": 3.0, "pi-east": -3.0, "pi-north": 1.0, "pi-south": -1.0]
            try await site.run(100...105, exponent: 2.6, gains: gains)
            for (role, status) in [(nil, HTTPResponse.Status.unauthorized), (.gateway, .forbidden)] as [(Role?, HTTPResponse.Status)] {
                try await client.execute(uri: path, method: .get, headers: site.harness.headers(role)) { #expect($0.status == status) }
            }
            try await client.execute(uri: path, method: .get, headers: site.harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.CalibrationReply.self)
                #expect(reply.status == "fitted")
                #expect(abs((reply.exponent ?? 0) - 2.6) < 0.1, "\(reply)")
                #expect(reply.links == 16)
                for (gateway, gain) in gains { #expect(abs((reply.receiverGain?[gateway] ?? 99) - gain) < 0.5, "\(gateway): \(reply)") }
                for power in reply.beaconPower?.values.sorted() ?? [] { #expect(abs(power + 59) < 1, "\(reply)") }
            }
        }
    }

    /// The map with a survey of a radio whose exponent is 2.6 and whose survey phone reads 4 dB
    /// hot: a scan every 2 m over the floor, every beacon in each (walls included).
    static func surveyedMapJSON() throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(mapJSON.utf8)) as? [String: Any])
        var scans: [[String: Any]] = []
        for x in stride(from: 1.0, to: 20, by: 2) {
            for y in stride(from: 1.0, to: 10, by: 2) {
                let spot = Position(x: x, y: y)
                var rssi: [String: Double] = [:]
                for beacon in map.beacons {
                    let horizontal = beacon.position.distance(to: spot)
                    let slant = (horizontal * horizontal + 1).squareRoot()
                    rssi[beacon.id] = -59 + 4 - 26 * log10(slant) - map.wallLoss(from: beacon.position, to: spot)
                }
                scans.append(["position": ["x": x, "y": y], "rssi": rssi])
            }
        }
        object["survey"] = scans
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    @Test func aMapsSurveyCalibratesTheSiteAtTheUploadBeforeAnyBatch() async throws {
        try await RouterHarness.with { harness, client in
            let document = try Self.surveyedMapJSON()
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/map", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(string: document)) { response in
                #expect(response.status == .ok, "\(response.text)")
            }
            let surveyLinks = try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/calibration", method: .get,
                                                       headers: harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.CalibrationReply.self)
                #expect(reply.status == "waiting", "no fixed gateway has heard a fixed beacon yet: \(reply)")
                let survey = try #require(reply.survey, "\(reply)")
                #expect(survey.points == 50)
                #expect(abs((survey.exponent ?? 0) - 2.6) < 0.1, "walls corrected, so the exponent is the radio's: \(survey)")
                #expect(survey.receiverGain?.keys.sorted() == [SiteTracker.surveyReceiver])
                for power in survey.beaconPower?.values.sorted() ?? [] { #expect(abs(power + 55) < 0.5, "the survey phone's 4 dB are in the powers: \(survey)") }
                return survey.links ?? 0
            }
            // The fixed links refit both fits; the gateways' own stays free of the survey.
            var gateways: [String: String] = [:]
            for name in Self.fixedGateways { gateways[name] = try await harness.server.store.registerGateway(name: name, siteID: harness.office.site.id).0.id }
            var site = Site(harness: harness, gateways: gateways)
            try await site.run(100...105, exponent: 2.6)
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/calibration", method: .get, headers: harness.headers(.readOnly)) { response in
                let reply = try response.json(ProximaServer.CalibrationReply.self)
                #expect(reply.status == "fitted" && reply.links == 16, "\(reply)")
                #expect(reply.receiverGain?[SiteTracker.surveyReceiver] == nil, "\(reply)")
                #expect(reply.survey?.links == surveyLinks + 16 && reply.survey?.receiverGain?.count == 5, "both fits have the fixed links: \(reply)")
            }
        }
    }

    // MARK: Refusals and roles of the reading routes

    static let readingRoutes = ["/v1/positions?site=SITE", "/v1/rooms?site=SITE", "/v1/route?site=SITE&from=1,1&to=car"]

    @Test(arguments: readingRoutes)
    func readingRoutesCheckTheRole(route: String) async throws {
        try await Self.withSite { site, client in
            let uri = route.replacingOccurrences(of: "SITE", with: String(site.siteID))
            try await client.execute(uri: uri, method: .get, headers: site.harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: uri, method: .get, headers: site.harness.headers(.gateway)) { response in
                #expect(response.status == .forbidden)
                #expect(response.text.contains("'gateway'"))
            }
            for role in [Role.readOnly, .operator, .admin] {
                try await client.execute(uri: uri, method: .get, headers: site.harness.headers(role)) { #expect($0.status == .ok, "\(role)") }
            }
        }
    }

    static let refusals: [(String, HTTPResponse.Status, String)] = [
        ("/v1/positions", .badRequest, "site"),
        ("/v1/positions?site=first", .badRequest, "site"),
        ("/v1/rooms?site=999", .notFound, "site"),
        ("/v1/route?site=SITE&to=car", .badRequest, "from"),
        ("/v1/route?site=SITE&from=1,1", .badRequest, "to"),
        ("/v1/route?site=SITE&from=nobody&to=car", .notFound, "from"),
        ("/v1/route?site=SITE&from=50,1&to=car", .unprocessableContent, "from"),
        ("/v1/route?site=SITE&from=1,1&to=garage", .notFound, "to"),
        ("/v1/route?site=SITE&from=1,1&to=1,-3", .unprocessableContent, "to"),
    ]

    @Test(arguments: refusals)
    func refusalsNameTheField(route: String, status: HTTPResponse.Status, field: String) async throws {
        try await Self.withSite { site, client in
            let uri = route.replacingOccurrences(of: "SITE", with: String(site.siteID))
            try await client.execute(uri: uri, method: .get, headers: site.harness.headers(.readOnly)) { response in
                #expect(response.status == status, "\(response.text)")
                #expect(response.errorField == field)
            }
        }
    }

    @Test func aSiteWithoutAMapIsRefusedNamingTheSite() async throws {
        try await RouterHarness.with { harness, client in
            try await client.execute(uri: "/v1/positions?site=\(harness.office.site.id)", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "site")
                #expect(response.text.contains("no map"))
            }
        }
    }

    /// Every route of this part is in /openapi.yaml.
    @Test func openAPIDocumentsThePositionRoutes() {
        let document = ProximaServer.openAPIDocument
        for path in ["/v1/sites/{id}/map", "/v1/sites/{id}/calibration", "/v1/positions", "/v1/rooms", "/v1/route"] {
            #expect(document.contains("\n  \(path):\n"), "missing \(path)")
        }
        for schema in ["SubjectPosition", "RoomEvent", "SiteCalibration", "Route"] {
            #expect(document.contains("\n    \(schema):\n"), "missing schema \(schema)")
        }
    }

    /// The required lists of the new answers are what they always carry.
    @Test func answersListWhatTheyAlwaysCarry() throws {
        let bare = SubjectPosition(subject: "phone-anna", kind: "phone", lastHeard: 1, anchors: 0)
        let answers: [(String, any Encodable)] = [
            ("SubjectPosition", bare), ("SiteCalibration", ProximaServer.CalibrationReply(siteID: 1, status: "waiting")),
            ("RoomEvent", RoomOccurrence(kind: .roomEnter, time: 1, room: "west", subject: .init(.phone("phone-anna")))),
            ("RoomSubject", RoomOccurrence.Subject(.phone("phone-anna"))),
        ]
        for (name, value) in answers {
            let schema = try OpenAPIContractTests.Schema(named: name, in: ProximaServer.openAPIDocument)
            let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
            #expect(Set(object.keys) == schema.required, "\(name): carries \(object.keys.sorted()), documents \(schema.required.sorted())")
        }
    }
}
