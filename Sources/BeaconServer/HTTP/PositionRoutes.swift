import BeaconKit
import BeaconLocate
import Foundation
import Hummingbird
import NIOCore

extension ProximaServer {
    /// `GET /v1/positions`: every tracked subject of a site.
    struct PositionsReply: Codable {
        var siteID: Int
        var positions: [SubjectPosition]
    }

    /// `GET /v1/rooms`: every room of the site's map with who is in it.
    struct RoomsReply: Codable {
        struct Occupant: Codable {
            var subject: String
            var kind: String
        }
        struct RoomEntry: Codable {
            var name: String
            var occupants: [Occupant]
        }
        var siteID: Int
        var rooms: [RoomEntry]
    }

    struct CalibrationReply: Codable {
        var siteID: Int
        /// `fitted`, or `waiting` until the fixed gateways heard fixed beacons at two distances.
        var status: String
        var exponent: Double?
        var beaconPower: [String: Double]?
        var receiverGain: [String: Double]?
        var residualSpread: Double?
        var links: Int?
        /// Gateway time of the latest refit.
        var fittedAt: Double?
        /// With a map survey: the fit of the fixed links and the survey's scans together, which
        /// phones are located with (`SiteTracker.surveyCalibration`).
        var survey: SurveyFit?

        struct SurveyFit: Codable {
            var points: Int
            var exponent: Double?
            var beaconPower: [String: Double]?
            var receiverGain: [String: Double]?
            var residualSpread: Double?
            var links: Int?

            init(points: Int, fit: SiteCalibration?) {
                self.points = points
                exponent = fit?.exponent
                beaconPower = fit?.beaconPower
                receiverGain = fit?.receiverGain
                residualSpread = fit?.residualSpread
                links = fit?.links
            }
        }
    }

    struct RouteReply: Codable {
        struct Point: Codable {
            var x: Double
            var y: Double
        }
        var siteID: Int
        var from: Point
        var to: String
        var waypoints: [Point]
        var doors: [String]
        var length: Double
    }

    func addPositionRoutes(to router: Hummingbird.Router<ProximaRequestContext>) {
        router.put("/v1/sites/:id/map") { [store, positions] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let buffer = try await request.body.collect(upTo: SiteMap.Limits.bytes)
            guard buffer.readableBytes > 0 else { throw APIError(.badRequest, field: "body", "expected a JSON site map, found an empty body") }
            let stored = try await store.setSiteMap(siteID: id, document: Data(buffer: buffer))
            positions.start(stored)
            return Self.text(stored.document, contentType: "application/json")
        }
        router.get("/v1/sites/:id/map") { [store] _, context in
            try context.require(.read)
            let id = try Self.intParameter(context, "id")
            guard let stored = try await store.siteMap(siteID: id) else {
                throw APIError(.notFound, field: "id", "site \(id) has no map; upload one with PUT /v1/sites/\(id)/map")
            }
            return Self.text(stored.document, contentType: "application/json")
        }
        router.get("/v1/sites/:id/calibration") { [store, positions] _, context in
            try context.require(.read)
            let id = try Self.intParameter(context, "id")
            guard let version = try await store.siteMapVersion(siteID: id) else {
                throw APIError(.notFound, field: "id", "site \(id) has no map; upload one with PUT /v1/sites/\(id)/map")
            }
            let tracker = positions.tracker(siteID: id, mapVersion: version)
            let survey = tracker.flatMap { $0.map.survey.isEmpty ? nil : CalibrationReply.SurveyFit(points: $0.map.survey.count, fit: $0.surveyCalibration) }
            guard let tracker, let fit = tracker.calibration else {
                return try Self.json(CalibrationReply(siteID: id, status: "waiting", survey: survey))
            }
            return try Self.json(CalibrationReply(siteID: id, status: "fitted", exponent: fit.exponent, beaconPower: fit.beaconPower,
                                                  receiverGain: fit.receiverGain, residualSpread: fit.residualSpread, links: fit.links,
                                                  fittedAt: tracker.calibratedAt, survey: survey))
        }
        router.get("/v1/positions") { request, context in
            try context.require(.read)
            let (siteID, tracker) = try await self.trackedSite(request)
            return try Self.json(PositionsReply(siteID: siteID, positions: tracker?.positions ?? []))
        }
        router.get("/v1/rooms") { request, context in
            try context.require(.read)
            let (siteID, map, tracker) = try await self.trackedSiteWithMap(request)
            var occupants: [String: [RoomsReply.Occupant]] = [:]
            for position in tracker?.positions ?? [] {
                guard let room = position.room else { continue }
                occupants[room, default: []].append(RoomsReply.Occupant(subject: position.subject, kind: position.kind))
            }
            return try Self.json(RoomsReply(siteID: siteID, rooms: map.rooms.map { RoomsReply.RoomEntry(name: $0.name, occupants: occupants[$0.name] ?? []) }))
        }
        router.get("/v1/route") { request, context in
            try context.require(.read)
            let (siteID, map, tracker) = try await self.trackedSiteWithMap(request)
            guard let fromText = Self.query(request, "from"), !fromText.isEmpty else {
                throw APIError(.badRequest, field: "from", "expected ?from=X,Y (metres) or a tracked subject (UUID:major:minor or a phone's gateway name)")
            }
            guard let toText = Self.query(request, "to"), !toText.isEmpty else {
                throw APIError(.badRequest, field: "to", "expected ?to=<room>, <point of interest> or X,Y (metres)")
            }
            let start = try Self.start(fromText, map: map, tracker: tracker)
            let destination = try Self.destination(toText, map: map)
            guard let route = BeaconLocate.Router(map: map).route(from: start, to: destination) else {
                throw APIError(.unprocessableContent, field: "to", "no walkable route from \(fromText.prefix(80)) to '\(toText.prefix(80))' on the map")
            }
            return try Self.json(RouteReply(siteID: siteID, from: .init(x: start.x, y: start.y), to: toText,
                                            waypoints: route.waypoints.map { .init(x: $0.x, y: $0.y) }, doors: route.doors, length: route.length))
        }
    }

    /// `?site=` of a site with a map, and its tracker when it has one.
    func trackedSite(_ request: Request) async throws -> (Int, SiteTracker?) {
        let (siteID, _, tracker) = try await trackedSiteWithMap(request)
        return (siteID, tracker)
    }

    func trackedSiteWithMap(_ request: Request) async throws -> (Int, SiteMap, SiteTracker?) {
        guard let text = Self.query(request, "site") else { throw APIError(.badRequest, field: "site", "expected ?site=<site id>") }
        guard let siteID = Int(text) else { throw APIError(.badRequest, field: "site", "expected a site id (an integer), found '\(text.prefix(40))'") }
        let version: Int?
        do { version = try await store.siteMapVersion(siteID: siteID) } catch let error as RegistryError where error.kind == .notFound {
            throw APIError(.notFound, field: "site", "no site \(siteID)")
        }
        guard let version else {
            throw APIError(.notFound, field: "site", "site \(siteID) has no map; upload one with PUT /v1/sites/\(siteID)/map")
        }
        // The tracker holds the map already decoded; without one (no batch yet since this map,
        // or another instance uploaded it) the stored document is read.
        if let tracker = positions.tracker(siteID: siteID, mapVersion: version) { return (siteID, tracker.map, tracker) }
        guard let stored = try await store.siteMap(siteID: siteID) else {
            throw APIError(.notFound, field: "site", "site \(siteID) has no map; upload one with PUT /v1/sites/\(siteID)/map")
        }
        return (siteID, stored.map, nil)
    }

    static func point(_ text: String, map: SiteMap, field: String) throws -> Position? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = Double(parts[0].trimmingCharacters(in: .whitespaces)),
              let y = Double(parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        guard (0...map.width).contains(x), (0...map.height).contains(y) else {
            throw APIError(.unprocessableContent, field: field, "expected a point within the map (0…\(map.width), 0…\(map.height) m), found \(text.prefix(60))")
        }
        return Position(x: x, y: y)
    }

    static func start(_ text: String, map: SiteMap, tracker: SiteTracker?) throws -> Position {
        if let point = try point(text, map: map, field: "from") { return point }
        guard let subject = tracker?.position(of: text) else {
            throw APIError(.notFound, field: "from", "expected X,Y or a tracked subject of this site, found '\(text.prefix(80))'")
        }
        guard let x = subject.x, let y = subject.y else {
            throw APIError(.unprocessableContent, field: "from", "'\(text.prefix(80))' is tracked but has no position yet (heard by room receivers only)")
        }
        return Position(x: x, y: y)
    }

    static func destination(_ text: String, map: SiteMap) throws -> BeaconLocate.Router.Destination {
        if map.room(named: text) != nil { return .room(text) }
        if map.pointsOfInterest.contains(where: { $0.name == text }) { return .pointOfInterest(text) }
        if let point = try point(text, map: map, field: "to") { return .point(point) }
        throw APIError(.notFound, field: "to", "expected a room, a point of interest or X,Y on the map, found '\(text.prefix(80))'")
    }
}
