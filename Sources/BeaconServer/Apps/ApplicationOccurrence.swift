import BeaconKit
import Foundation
import SQLKit

/// What a device application decided for a device, as an event on every feed: a check-in
/// (`{"event":"checkIn","time":…,"device":…,"zone":{…},"visitStart":…}`) or a ranked choice of
/// offers delivered (`{"event":"offersDelivered","time":…,"device":…,"offers":[…]}`).
public struct ApplicationOccurrence: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable { case checkIn, offersDelivered }

    /// The check-in zone of a `checkIn`.
    public struct Zone: Sendable, Hashable, Codable {
        public var id: Int
        public var label: String
        /// The zone's beacon region: the site's UUID and major, the zone's minor.
        public var uuid: UUID
        public var major: UInt16
        public var minor: UInt16
    }

    /// One offer of an `offersDelivered` choice, nearest first.
    public struct Offer: Sendable, Hashable, Codable {
        public var offerID: Int
        public var zoneID: Int
        public var title: String
        public var proximity: String
    }

    public var kind: Kind
    /// Seconds on the device's clock.
    public var time: Double
    /// The device (its gateway id).
    public var device: String
    public var zone: Zone?
    /// The start of the visit a check-in counts (the check-in's key with the zone).
    public var visitStart: Double?
    public var offers: [Offer]?

    private enum CodingKeys: String, CodingKey { case kind = "event", time, device, zone, visitStart, offers }

    var zoneIdentity: BeaconIdentity? {
        zone.map { BeaconIdentity(uuid: $0.uuid, major: $0.major, minor: $0.minor) }
    }

    /// The event's `label`: the zone's for a check-in; the first offer's title for offers.
    var label: String {
        switch kind {
        case .checkIn: zone?.label ?? "check-in"
        case .offersDelivered: offers?.first?.title ?? "offers"
        }
    }

    /// Stores it as the device's event in the batch's transaction and returns it as published.
    /// A check-in carries its zone's beacon identity, so `?region=` filters find it.
    func store(siteID: Int, now: Double, db: any SQLDatabase) async throws -> StoredEvent? {
        let row = EventRow(gatewayID: device, kind: kind.rawValue, identity: zoneIdentity, siteID: siteID, label: label, time: time,
                           recordedAt: now, subjectKind: "device", subject: device, detail: try ProximaJSON.text(self))
        guard let id = try await row.insert(db: db) else { return nil }
        return StoredEvent(id: id, gatewayID: device, siteID: siteID, label: label, occurrence: .application(self))
    }
}

extension Store {
    static func decodeApplicationEvent(_ row: any SQLRow) throws -> StoredEvent {
        let detail = try row.optionalString("detail") ?? ""
        let occurrence: ApplicationOccurrence
        do { occurrence = try JSONDecoder().decode(ApplicationOccurrence.self, from: Data(detail.utf8)) } catch {
            throw RegistryError(.invalid, field: "detail", "stored application event \(try row.int("id")) does not decode: \(error)")
        }
        return StoredEvent(id: try row.int("id"), gatewayID: try row.string("gateway_id"), siteID: try row.optionalInt("site_id"),
                           label: try row.string("label"), occurrence: .application(occurrence))
    }
}
