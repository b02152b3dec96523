import BeaconLocate
import Foundation
import SQLKit

extension Store {
    /// Appends recorded scans to the site's stored map document (tags to `tagSurvey`, phones to
    /// `survey`) as a new version, in one transaction with the map's row locked, so two saves
    /// (or a save and an upload) cannot lose each other's scans. The result is checked as an
    /// upload is: a map that would exceed a limit is refused with the field named, and nothing
    /// is stored.
    public func appendSurvey(siteID: Int, recordings: [SurveyRecorder.Recording],
                             now: Double = Date().timeIntervalSince1970) async throws -> StoredSiteMap {
        try await database.transaction { [rowLock = database.rowLockSuffix] db in
            _ = try await Self.site(id: siteID, db: db)
            guard let row = try await db.raw(SQLQueryString("SELECT document, version FROM site_maps WHERE site_id = \(bind: siteID)") + SQLQueryString(rowLock)).first() else {
                throw RegistryError(.notFound, field: "id", "site \(siteID) has no map; upload one with PUT /v1/sites/\(siteID)/map")
            }
            let stored = Data(try row.string("document").utf8)
            let current = try Self.decodedMap(stored) { "the stored map of site \(siteID) no longer loads: \($0)" }
            let document = try Self.appending(Self.kept(recordings, on: current), to: stored)
            let map = try Self.decodedMap(document) { "the map with these scans is refused: expected \($0.expected), found \($0.found)" }
            let version = try row.int("version") + 1
            let text = String(decoding: document, as: UTF8.self)
            try await db.raw("""
                UPDATE site_maps SET document = \(bind: text), version = \(bind: version), updated_at = \(bind: now) WHERE site_id = \(bind: siteID)
                """).run()
            return StoredSiteMap(siteID: siteID, document: text, version: version, map: map)
        }
    }

    private static func decodedMap(_ document: Data, refusal: (SiteMapError) -> String) throws -> SiteMap {
        do { return try SiteMap.decode(document) } catch {
            throw RegistryError(.invalid, field: error.path.isEmpty ? "recordings" : error.path, refusal(error))
        }
    }

    /// Each scan's readings of receivers (tags) or beacons (phones) the map still has: the map
    /// may have been replaced since the recording; a scan left with none is dropped.
    static func kept(_ recordings: [SurveyRecorder.Recording], on map: SiteMap) -> [SurveyRecorder.Recording] {
        let placed = Set(map.receivers.filter { $0.position != nil }.map(\.name))
        let beacons = Set(map.beacons.map(\.id))
        return recordings.compactMap { recording in
            var kept = recording
            kept.readings = recording.readings.filter { (recording.kind == .tag ? placed : beacons).contains($0.key) }
            return kept.readings.isEmpty ? nil : kept
        }
    }

    /// The document with the scans added to its arrays; every other member is kept as it was.
    static func appending(_ recordings: [SurveyRecorder.Recording], to document: Data) throws -> Data {
        guard var object = try JSONSerialization.jsonObject(with: document) as? [String: Any] else {
            throw RegistryError(.invalid, field: "map", "the stored map is not a JSON object")
        }
        for recording in recordings {
            var scan: [String: Any] = ["position": ["x": recording.position.x, "y": recording.position.y], "rssi": recording.readings]
            let key: String
            switch recording.kind {
            case .tag:
                key = "tagSurvey"
                scan["measuredPower"] = recording.measuredPower ?? SiteMap.defaultTagSurveyPower
            case .phone:
                key = "survey"
            }
            var scans = object[key] as? [Any] ?? []
            scans.append(scan)
            object[key] = scans
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}

extension Store {
    /// Whether a gateway of that name is registered at the site (a phone posts as one).
    func hasGateway(named name: String, siteID: Int) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT id FROM gateways WHERE name = \(bind: name) AND site_id = \(bind: siteID)").first() != nil
        }
    }
}
