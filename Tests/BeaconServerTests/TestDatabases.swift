import BeaconKit
import BeaconServer
import BeaconTesting
import Foundation
import Testing

/// The backends every store test runs on. PostgreSQL is a real server the tests start
/// themselves; on CI it must start, so a missing server fails instead of skipping.
enum TestBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var available: [TestBackend] {
        if let only = ProcessInfo.processInfo.environment["PROXIMA_TEST_BACKENDS"] {
            return only.split(separator: ",").compactMap { TestBackend(rawValue: String($0)) }
        }
        return PostgresServer.shouldRun ? [.sqlite, .postgres] : [.sqlite]
    }

    var testDescription: String { rawValue }

    /// A fresh, migrated, empty database of this backend.
    func location() throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let path = NSTemporaryDirectory() + "proxima-test-\(UUID().uuidString).sqlite"
            return .sqliteFile(path: path)
        case .postgres:
            return try DatabaseLocation(parsing: try PostgresServer.shared().createDatabase())
        }
    }

    /// Runs `body` with a fresh store and always closes it (sqlite-nio asserts on open drops).
    func withStore<T>(_ body: (Store) async throws -> T) async throws -> T {
        let location = try location()
        let database = try await ProximaDatabase.open(location)
        do {
            let result = try await body(Store(database: database))
            await database.close()
            removeFiles(location)
            return result
        } catch {
            await database.close()
            removeFiles(location)
            throw error
        }
    }

    private func removeFiles(_ location: DatabaseLocation) {
        guard case .sqliteFile(let path) = location else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// The book's office example, used across tests.
enum Fixture {
    static let nerderyUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let secondUUID = UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!

    struct Office {
        var organisation: Organisation
        var site: Site
        var mordor: Beacon
    }

    /// An organisation, a site "Bloomington Office" and a deployed "Conference Room: Mordor".
    static func office(_ store: Store) async throws -> Office {
        let organisation = try await store.createOrganisation(name: "Nerdery", proximityUUIDs: [nerderyUUID])
        try await store.setCategory(Category(code: 1, name: "Conference Room"))
        try await store.setCategory(Category(code: 2, name: "Restroom"))
        let site = try await store.createSite(NewSite(organisationID: organisation.id, name: "Bloomington Office",
                                                      address: "9555 James Ave S, Bloomington, MN", planWidth: 60, planHeight: 40))
        let mordor = try await store.addBeacon(NewBeacon(siteID: site.id, category: 1, label: "Mordor",
                                                         position: Position(x: 12, y: 8), installedOn: "2014-03-01", state: .deployed))
        return Office(organisation: organisation, site: site, mordor: mordor)
    }
}
