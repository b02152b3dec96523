import BeaconKit
import BeaconLocate
import Foundation
import SQLKit
import Synchronization

/// The server's side of positions: one BeaconLocate's `SiteTracker` per site that has a map, fed each
/// accepted batch of the site's gateways inside the batch's transaction, so room changes are
/// stored with the batch's region events and reach the same feeds.
///
/// Trackers live in this instance's memory. A new map (a higher version in `site_maps`) starts
/// the site's tracker afresh; so does a restart. Each site has a lock of its own, so one site's
/// tracking never waits on another's. With several instances, send all of a site's
/// gateways to one instance (positions need every gateway's view of a subject): each instance
/// answers `GET /v1/positions` from what it ingested, while room events are stored for all.
public final class PositionTracking: Sendable {
    public let configuration: SiteTracker.Configuration
    /// Only for finding a site's slot and a gateway's place: one site's tracking never waits on
    /// another's, because each site's tracker and recorder have a lock of their own.
    private let state = Mutex(State())

    private struct State: Sendable {
        var sites: [Int: SiteSlot] = [:]
        /// Gateways cannot move between sites or be renamed, so their place is read once.
        var gateways: [String: Place] = [:]
    }

    /// One site's tracker and survey recorder behind the site's own lock.
    private final class SiteSlot: Sendable {
        let site = Mutex(Site())
    }

    private struct Site: Sendable {
        var version: Int?
        var tracker: SiteTracker?
        /// Made at the site's first survey recording (BeaconLocate's `SurveyRecorder`).
        var recorder: SurveyRecorder?
    }

    struct Place: Sendable {
        var name: String
        var siteID: Int?
    }

    public init(configuration: SiteTracker.Configuration = SiteTracker.Configuration()) {
        self.configuration = configuration
    }

    private func slot(_ siteID: Int) -> SiteSlot {
        state.withLock { state in
            if let slot = state.sites[siteID] { return slot }
            let slot = SiteSlot()
            state.sites[siteID] = slot
            return slot
        }
    }

    private func existingSlot(_ siteID: Int) -> SiteSlot? {
        state.withLock { $0.sites[siteID] }
    }

    /// Runs a batch through its site's tracker and stores the room changes it caused.
    func step(gatewayID: String, sightings: [Sighting], now: Double, db: any SQLDatabase) async throws -> [StoredEvent] {
        guard !sightings.isEmpty, let place = try await place(of: gatewayID, db: db), let siteID = place.siteID else { return [] }
        guard let version = try await Store.siteMapVersion(siteID: siteID, db: db) else {
            existingSlot(siteID)?.site.withLock { site in
                site.version = nil
                site.tracker = nil
            }
            return []
        }
        let slot = slot(siteID)
        if slot.site.withLock({ $0.version }) != version, let stored = try await Store.siteMap(siteID: siteID, db: db) {
            let fresh = SiteTracker(map: stored.map, configuration: configuration)
            slot.site.withLock { Self.install(stored, fresh, in: &$0) }
        }
        let changes = slot.site.withLock { site in
            site.recorder?.receive(sightings, gateway: place.name)
            return site.tracker?.receive(sightings, gateway: place.name) ?? []
        }
        guard !changes.isEmpty else { return [] }
        return try await Store.storeRoomChanges(changes, siteID: siteID, gatewayID: gatewayID, now: now, db: db)
    }

    private func place(of gatewayID: String, db: any SQLDatabase) async throws -> Place? {
        if let known = state.withLock({ $0.gateways[gatewayID] }) { return known }
        guard let row = try await db.raw("SELECT name, site_id FROM gateways WHERE id = \(bind: gatewayID)").first() else { return nil }
        let place = Place(name: try row.string("name"), siteID: try row.optionalInt("site_id"))
        state.withLock { state in
            if state.gateways.count >= 100_000 { state.gateways.removeAll() }
            state.gateways[gatewayID] = place
        }
        return place
    }

    /// A copy of the site's tracker (copy-on-write: cheap until the next batch), nil before the
    /// site's first batch since its map was set.
    public func tracker(siteID: Int) -> SiteTracker? {
        existingSlot(siteID)?.site.withLock { $0.tracker }
    }

    /// The site's tracker if it follows this version of the map.
    public func tracker(siteID: Int, mapVersion: Int) -> SiteTracker? {
        existingSlot(siteID)?.site.withLock { site in site.version == mapVersion ? site.tracker : nil }
    }

    /// Starts the site afresh on a new map at once, so that what its survey fits is there
    /// before the first batch (and is fitted once, at the upload).
    func start(_ stored: StoredSiteMap) {
        let fresh = SiteTracker(map: stored.map, configuration: configuration)
        slot(stored.siteID).site.withLock { Self.install(stored, fresh, in: &$0) }
    }

    /// Puts the tracker of a newer map version in place (an older one, built by a slower
    /// caller, is dropped), and has the site's survey recorder follow the map.
    private static func install(_ stored: StoredSiteMap, _ fresh: SiteTracker, in site: inout Site) {
        guard (site.version ?? -1) < stored.version else { return }
        site.version = stored.version
        site.tracker = fresh
        site.recorder?.adopt(stored.map)
    }

    // MARK: Survey recordings (BeaconLocate's `SurveyRecorder`), kept in this instance's memory as trackers are.

    /// Starts recording a survey scan of `subject` at `position`, on the site's current map.
    func beginSurvey(siteID: Int, map: SiteMap, subject: TrackedSubject, position: Position,
                     seconds: Double) throws(SurveyRecorder.Refusal) -> SurveyRecorder.Recording {
        try slot(siteID).site.withLock { site throws(SurveyRecorder.Refusal) in
            var recorder = site.recorder ?? SurveyRecorder(map: map, clock: site.tracker?.latestTime)
            let recording = try recorder.begin(subject, at: position, seconds: seconds)
            site.recorder = recorder
            return recording
        }
    }

    /// The site's recordings, oldest first, and its clock (the latest sighting time seen).
    func surveyRecordings(siteID: Int) -> (recordings: [SurveyRecorder.Recording], clock: Double?) {
        existingSlot(siteID)?.site.withLock { site in (site.recorder?.recordings ?? [], site.recorder?.clock) } ?? ([], nil)
    }

    func discardSurvey(siteID: Int, recording id: Int) -> Bool {
        existingSlot(siteID)?.site.withLock { site in site.recorder?.discard(id) ?? false } ?? false
    }

    func takeFinishedSurvey(siteID: Int) -> [SurveyRecorder.Recording] {
        existingSlot(siteID)?.site.withLock { site in site.recorder?.takeFinished() ?? [] } ?? []
    }

    func restoreSurvey(siteID: Int, _ recordings: [SurveyRecorder.Recording]) {
        guard !recordings.isEmpty else { return }
        existingSlot(siteID)?.site.withLock { site in site.recorder?.restore(recordings) }
    }
}
