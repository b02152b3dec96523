import BeaconKit
import BeaconLocate
import Foundation
import Hummingbird

extension ProximaServer {
    /// `POST /v1/sites/{id}/survey-recordings`: what to record.
    struct SurveyRecordingRequest: Decodable {
        var subject: String
        var position: Position
        var seconds: Double?
    }

    static let defaultSurveySeconds = 10.0

    func addSurveyRoutes(to router: Hummingbird.Router<ProximaRequestContext>) {
        router.post("/v1/sites/:id/survey-recordings") { [store, positions] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let asked = try await Self.decode(SurveyRecordingRequest.self, from: request, limit: 16 * 1024)
            guard let stored = try await store.siteMap(siteID: id) else {
                throw APIError(.notFound, field: "id", "site \(id) has no map; upload one with PUT /v1/sites/\(id)/map")
            }
            let subject = try await Self.surveySubject(asked.subject, map: stored.map, siteID: id, store: store)
            let map = stored.map
            guard asked.position.x.isFinite, (0...map.width).contains(asked.position.x) else {
                throw APIError(.unprocessableContent, field: "position.x", "expected metres within the map's width 0…\(map.width), found \(asked.position.x)")
            }
            guard asked.position.y.isFinite, (0...map.height).contains(asked.position.y) else {
                throw APIError(.unprocessableContent, field: "position.y", "expected metres within the map's height 0…\(map.height), found \(asked.position.y)")
            }
            let seconds = asked.seconds ?? Self.defaultSurveySeconds
            let recording: SurveyRecorder.Recording
            do throws(SurveyRecorder.Refusal) {
                recording = try positions.beginSurvey(siteID: id, map: map, subject: subject,
                                                                position: asked.position, seconds: seconds)
            } catch .seconds {
                let range = SurveyRecorder.allowedSeconds
                throw APIError(.unprocessableContent, field: "seconds", "expected \(Int(range.lowerBound))…\(Int(range.upperBound)) seconds, found \(seconds)")
            } catch .full {
                throw APIError(.conflict, field: "recordings",
                               "the site already keeps \(SurveyRecorder.maximumRecordings) recordings; save the finished ones or discard some")
            }
            return try Self.json(recording, status: .created)
        }
        router.get("/v1/sites/:id/survey-recordings") { [store, positions] _, context in
            try context.require(.read)
            let id = try Self.intParameter(context, "id")
            guard try await store.siteMapVersion(siteID: id) != nil else {
                throw APIError(.notFound, field: "id", "site \(id) has no map; upload one with PUT /v1/sites/\(id)/map")
            }
            let (recordings, clock) = positions.surveyRecordings(siteID: id)
            return try Self.json(SurveyRecorder.Listing(siteID: id, clock: clock, recordings: recordings))
        }
        router.delete("/v1/sites/:id/survey-recordings/:recording") { [positions] _, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let recording = try Self.intParameter(context, "recording")
            guard positions.discardSurvey(siteID: id, recording: recording) else {
                throw APIError(.notFound, field: "recording", "site \(id) has no survey recording \(recording)")
            }
            return Response(status: .noContent)
        }
        router.post("/v1/sites/:id/survey-recordings/save") { [store, positions] _, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let finished = positions.takeFinishedSurvey(siteID: id)
            guard !finished.isEmpty else {
                throw APIError(.conflict, field: "recordings", "site \(id) has no finished survey recording to save")
            }
            let stored: StoredSiteMap
            do { stored = try await store.appendSurvey(siteID: id, recordings: finished) } catch {
                positions.restoreSurvey(siteID: id, finished)
                throw error
            }
            positions.start(stored)
            let kept = Store.kept(finished, on: stored.map)
            return try Self.json(SurveyRecorder.Saved(siteID: id, mapVersion: stored.version, tagSurvey: kept.count { $0.kind == .tag },
                                                 survey: kept.count { $0.kind == .phone }, dropped: finished.count - kept.count))
        }
    }

    /// A tag by `UUID:major:minor` (not one of the map's fixed beacons, with gateways placed to
    /// hear it), or a phone: a gateway of the site that is not among the map's receivers.
    static func surveySubject(_ text: String, map: SiteMap, siteID: Int, store: Store) async throws -> TrackedSubject {
        guard !text.isEmpty, text.utf8.count <= 200 else {
            throw APIError(.unprocessableContent, field: "subject", "expected a tag's UUID:major:minor or a phone's gateway name, found '\(text.prefix(80))'")
        }
        if let identity = SiteTracker.identity(text) {
            if map.beacons.contains(where: { $0.identity == identity }) {
                throw APIError(.unprocessableContent, field: "subject", "\(text) is one of the map's fixed beacons; survey with a carried tag")
            }
            guard map.receivers.contains(where: { $0.position != nil }) else {
                throw APIError(.unprocessableContent, field: "subject", "the map has no receiver with a position to hear a tag")
            }
            return .beacon(identity)
        }
        if map.receivers.contains(where: { $0.name == text }) {
            throw APIError(.unprocessableContent, field: "subject", "'\(text.prefix(80))' is one of the map's receivers; a phone is a gateway the map does not place")
        }
        guard try await store.hasGateway(named: text, siteID: siteID) else {
            throw APIError(.unprocessableContent, field: "subject", "expected a tag's UUID:major:minor or the name of a gateway of site \(siteID), found '\(text.prefix(80))'")
        }
        guard map.beacons.contains(where: { $0.identity != nil }) else {
            throw APIError(.unprocessableContent, field: "subject", "the map has no fixed beacon with an identity for a phone to hear")
        }
        return .phone(text)
    }
}
