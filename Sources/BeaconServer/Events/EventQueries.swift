import BeaconGateway
import BeaconKit
import Foundation
import SQLKit

/// Which events a reader wants: a site, and a region given as "UUID", "UUID:major" or "UUID:major:minor".
public struct EventFilter: Sendable, Hashable {
    public var siteID: Int?
    public var uuid: UUID?
    public var major: UInt16?
    public var minor: UInt16?
    /// One gateway's or device's events (a device reading its own).
    public var gatewayID: String?

    public init(siteID: Int? = nil, uuid: UUID? = nil, major: UInt16? = nil, minor: UInt16? = nil, gatewayID: String? = nil) {
        self.gatewayID = gatewayID
        self.siteID = siteID
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public init(site: String?, region: String?) throws(ServerInputError) {
        if let site {
            guard let id = Int(site) else {
                throw ServerInputError(field: "site", reason: "expected a site id (an integer), found '\(site.prefix(40))'")
            }
            siteID = id
        }
        if let region {
            let constraint: IdentityConstraint
            do { constraint = try IdentityConstraint(parsing: region) } catch {
                throw ServerInputError(field: "region", reason: error.description)
            }
            uuid = constraint.uuid
            major = constraint.major
            minor = constraint.minor
        }
    }
}

extension Store {
    /// Events after an id, oldest first, filtered in SQL, at most `limit` of them.
    public func events(after id: Int, filter: EventFilter = EventFilter(), limit: Int = EventPage.maximumLimit) async throws -> [StoredEvent] {
        try await database.read { db in
            var query = SQLQueryString("SELECT id, gateway_id, kind, uuid, major, minor, site_id, label, time, room, subject_kind, subject, detail, message FROM region_events WHERE id > \(bind: id)")
            if let siteID = filter.siteID { query += " AND site_id = \(bind: siteID)" }
            if let uuid = filter.uuid { query += " AND uuid = \(bind: uuid.uuidString)" }
            if let major = filter.major { query += " AND major = \(bind: Int(major))" }
            if let minor = filter.minor { query += " AND minor = \(bind: Int(minor))" }
            if let gatewayID = filter.gatewayID { query += " AND gateway_id = \(bind: gatewayID)" }
            query += " ORDER BY id LIMIT \(bind: limit)"
            return try await db.raw(query).all().map(Self.decodeEvent)
        }
    }

    static func decodeEvent(_ row: any SQLRow) throws -> StoredEvent {
        let kindText = try row.string("kind")
        if let roomKind = RoomOccurrence.Kind(rawValue: kindText) { return try decodeRoomEvent(row, kind: roomKind) }
        if FleetOccurrence.Kind(rawValue: kindText) != nil { return try decodeFleetEvent(row) }
        if ApplicationOccurrence.Kind(rawValue: kindText) != nil { return try decodeApplicationEvent(row) }
        guard let kind = GatewayMonitor.Transition(rawValue: kindText) else {
            throw RegistryError(.invalid, field: "kind", "stored event kind '\(kindText)' is not enter or exit")
        }
        let identity = BeaconIdentity(uuid: try row.uuid("uuid"), major: try row.uint16("major"), minor: try row.uint16("minor"))
        var event = try StoredEvent(id: try row.int("id"), gatewayID: try row.string("gateway_id"), siteID: try row.optionalInt("site_id"),
                                    label: try row.string("label"), transition: kind, identity: identity, time: try row.double("time"))
        if let message = try row.optionalString("message") {
            event.message = try JSONDecoder().decode(DeliveredMessage.self, from: Data(message.utf8))
        }
        return event
    }

    /// The latest ranging state per gateway and beacon.
    public func rangingState(gatewayID: String?) async throws -> [RangingRecord] {
        try await database.read { db in
            var query = SQLQueryString("SELECT gateway_id, uuid, major, minor, rssi, distance, proximity, time FROM ranging_state")
            if let gatewayID { query += " WHERE gateway_id = \(bind: gatewayID)" }
            query += " ORDER BY gateway_id, uuid, major, minor"
            return try await db.raw(query).all().map { row in
                RangingRecord(gatewayID: try row.string("gateway_id"), uuid: try row.uuid("uuid"), major: try row.uint16("major"),
                              minor: try row.uint16("minor"), rssi: try row.double("rssi"), distance: try row.optionalDouble("distance"),
                              proximity: try row.string("proximity"), time: try row.double("time"))
            }
        }
    }
}

public struct RangingRecord: Sendable, Hashable, Codable {
    public var gatewayID: String
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var rssi: Double
    public var distance: Double?
    public var proximity: String
    public var time: Double
}
