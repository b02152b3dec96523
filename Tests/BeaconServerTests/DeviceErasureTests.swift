import BeaconKit
import BeaconTesting
@testable import BeaconServer
import Foundation
import SQLKit
import Testing

/// Issue 15 (privacy): after `DELETE /v1/devices/{id}` no row of any table refers to the device.
/// The tables are read from the database's own catalogue, so a table added later is searched
/// too, and every column is searched as text for the device's id and its token's hash.
@Suite struct DeviceErasureTests {
    static var backends: [TestBackend] { TestBackend.available }

    @Test(arguments: backends)
    func aDeletedDeviceLeavesNoRowBehind(backend: TestBackend) async throws {
        try await AppsHarness.with(backend: backend) { harness in
            let mordor = harness.office.mordor.identity
            let (phone, phoneToken) = try await harness.register(name: "Erase me", positions: true)
            let (visitor, visitorToken) = try await harness.register(name: "Someone else")
            // The phone is a helper, acknowledges another visitor's request, files one of its
            // own, checks in at a zone, and has events and ranging state from its sightings.
            #expect(try await harness.call(.put, "/v1/help-helpers/\(phone.id)", as: .operator).status == .ok)
            #expect(try await harness.call(.put, "/v1/checkin-zones/\(harness.zoneID)", as: .operator, json: #"{"dwell":1,"absence":30}"#).status == .ok)
            var time = AppsHarness.monday
            for sequence in 0..<6 {
                time += 1
                #expect(try await harness.post(heard: mordor, at: time, token: phoneToken, sequence: sequence).status == .accepted)
            }
            let filed = try await harness.call(.post, "/v1/help-requests", token: visitorToken, json: #"{"name":"Visitor","minor":77}"#)
            #expect(filed.status == .created, "\(filed.text)")
            struct Filed: Decodable { var id: Int }
            let request = try filed.json(Filed.self)
            let acknowledged = try await harness.call(.post, "/v1/help-requests/\(request.id)/acknowledge", token: phoneToken)
            #expect(acknowledged.status == .ok, "\(acknowledged.text)")
            #expect(try await harness.call(.post, "/v1/help-requests", token: phoneToken, json: #"{"name":"Me","minor":78}"#).status == .created)

            let store = harness.server.store
            let hash = TokenHashing.hash(phoneToken)
            let before = try await Self.rowsMentioning([phone.id, hash], in: store.database)
            #expect(before.count >= 5, "the setup should have left the phone in many tables: \(before)")

            #expect(try await harness.call(.delete, "/v1/devices/\(phone.id)", as: .operator).status == .noContent)
            let after = try await Self.rowsMentioning([phone.id, hash], in: store.database)
            #expect(after.isEmpty, "rows still refer to the deleted device: \(after)")
            // The other visitor's request survives, without its helper's identity.
            let remaining = try await harness.call(.get, "/v1/help-requests/\(request.id)", token: visitorToken)
            #expect(remaining.status == .ok, "\(remaining.text)")
            #expect(!remaining.text.contains(phone.id))
            _ = visitor
        }
    }

    @Test func theExportHoldsEverythingAboutTheDeviceAndOnlyItsOwnerOrStaffGetIt() async throws {
        try await AppsHarness.with { harness in
            let mordor = harness.office.mordor.identity
            let (phone, phoneToken) = try await harness.register(name: "Export me", positions: true)
            let (_, otherToken) = try await harness.register(name: "Someone else")
            var time = AppsHarness.monday
            for sequence in 0..<4 {
                time += 1
                #expect(try await harness.post(heard: mordor, at: time, token: phoneToken, sequence: sequence).status == .accepted)
            }
            #expect(try await harness.call(.post, "/v1/help-requests", token: phoneToken, json: #"{"name":"Me","minor":91}"#).status == .created)

            let exported = try await harness.call(.get, "/v1/devices/\(phone.id)/export", token: phoneToken)
            #expect(exported.status == .ok, "\(exported.text)")
            #expect(exported.headers[.contentType] == "application/x-ndjson")
            let lines = exported.text.split(separator: "\n")
            let records = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let kinds = records.compactMap { $0["kind"] as? String }
            #expect(kinds.first == "device")
            #expect(kinds.contains("event"), "\(kinds)")
            #expect(kinds.filter { $0 == "helpRequest" }.count == 1)
            #expect(kinds.contains("checkins") && kinds.contains("offers"))
            let storedEvents = try await harness.eventObjects(deviceID: phone.id, token: phoneToken)
            #expect(kinds.filter { $0 == "event" }.count == storedEvents.count)
            #expect((records.first?["data"] as? [String: Any])?["id"] as? String == phone.id)

            #expect(try await harness.call(.get, "/v1/devices/\(phone.id)/export").status == .unauthorized)
            #expect(try await harness.call(.get, "/v1/devices/\(phone.id)/export", token: otherToken).status == .forbidden)
            #expect(try await harness.call(.get, "/v1/devices/\(phone.id)/export", as: .gateway).status == .forbidden)
            #expect(try await harness.call(.get, "/v1/devices/\(phone.id)/export", as: .readOnly).status == .ok)
            let missing = try await harness.call(.get, "/v1/devices/\(UUID().uuidString.lowercased())/export", as: .readOnly)
            #expect(missing.status == .notFound)
            #expect(missing.errorField == "id")
        }
    }

    /// `table.column (n rows)` for every column holding any of the needles, over every table.
    static func rowsMentioning(_ needles: [String], in database: ProximaDatabase) async throws -> [String] {
        try await database.read { db in
            let tables: [String]
            switch database.dialect {
            case .sqlite:
                tables = try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all().map { try $0.decode(column: "name", as: String.self) }
            case .postgres:
                tables = try await db.raw("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'").all().map { try $0.decode(column: "name", as: String.self) }
            }
            var found: [String] = []
            for table in tables {
                let columns: [String]
                switch database.dialect {
                case .sqlite:
                    columns = try await db.raw("SELECT name FROM pragma_table_info(\(bind: table))").all().map { try $0.decode(column: "name", as: String.self) }
                case .postgres:
                    columns = try await db.raw("SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(bind: table)").all().map { try $0.decode(column: "name", as: String.self) }
                }
                for column in columns {
                    for needle in needles {
                        let count = try await db.raw("""
                            SELECT COUNT(*) AS n FROM \(ident: table) WHERE CAST(\(ident: column) AS TEXT) LIKE \(bind: "%" + needle + "%")
                            """).first()?.decode(column: "n", as: Int.self) ?? 0
                        if count > 0 { found.append("\(table).\(column) (\(count) rows)") }
                    }
                }
            }
            return found
        }
    }
}
