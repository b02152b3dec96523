import BeaconKit
@testable import BeaconServer
import BeaconTesting
import Foundation
import Synchronization
import Testing

/// The live streams' ring: events in id order whatever order batches publish them in, a hole
/// closed by one database read shared by every reader, a cursor older than the ring sent to
/// the database, the same filter as the database's, and many followers served without a
/// database read each.
@Suite("Event ring")
struct EventRingTests {
    static let beacon = BeaconIdentity(uuid: UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!, major: 1, minor: 7)

    /// Stores a region event the way ingestion does and returns it as published.
    static func storeEnter(_ store: Store, identity: BeaconIdentity = beacon, siteID: Int? = nil, gateway: String = "door") async throws -> StoredEvent {
        try await store.database.transaction { db in
            let row = EventRow(gatewayID: gateway, kind: "enter", identity: identity, siteID: siteID, label: "b", time: 1, recordedAt: 1)
            let id = try #require(try await row.insert(db: db))
            return try StoredEvent(id: id, gatewayID: gateway, siteID: siteID, label: "b", transition: .enter, identity: identity, time: 1)
        }
    }

    static func ids(_ read: EventRing.Read) -> [Int]? {
        guard case .events(let events, _) = read else { return nil }
        return events.map(\.id)
    }

    @Test func eventsAreReleasedInIdOrderWhateverThePublicationOrder() async throws {
        try await TestBackend.sqlite.withStore { store in
            let ring = EventRing(store: store)
            #expect(Self.ids(try await ring.read(after: 0, filter: EventFilter(), limit: 100)) == [])
            let first = try await Self.storeEnter(store), second = try await Self.storeEnter(store), third = try await Self.storeEnter(store)
            await ring.publish([third])
            await ring.publish([second])
            // 1 is committed but not yet published: 2 and 3 wait for it, so no reader's cursor skips it.
            guard case .events(let none, let through) = try await ring.read(after: 0, filter: EventFilter(), limit: 100) else {
                Issue.record("the ring sent a reader at its own start to the database")
                return
            }
            #expect(none.isEmpty && through == 0)
            await ring.publish([first])
            #expect(Self.ids(try await ring.read(after: 0, filter: EventFilter(), limit: 100)) == [1, 2, 3])
            #expect(Self.ids(try await ring.read(after: 1, filter: EventFilter(), limit: 1)) == [2])
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aHoleIsClosedByOneDatabaseReadSharedByEveryWaitingReader() async throws {
        try await TestBackend.sqlite.withStore { store in
            let clock = TestClock()
            let reads = Mutex(0)
            let ring = EventRing(store: store, clock: clock, onDatabaseRead: { reads.withLock { $0 += 1 } })
            _ = try await ring.read(after: 0, filter: EventFilter(), limit: 100)
            #expect(reads.withLock { $0 } == 1, "the ring's start reads the newest id once")
            // Event 1 is never published (a transaction that rolled back after taking its id is
            // the same hole); event 2 is.
            _ = try await Self.storeEnter(store)
            let second = try await Self.storeEnter(store)
            try await store.database.transaction { db in try await db.raw("DELETE FROM region_events WHERE id = 1").run() }
            await ring.publish([second])

            let readers = 5
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<readers {
                    group.addTask { try await ring.wait(after: 0, timeout: .milliseconds(250)) }
                }
                await clock.waitForSleepers(readers)
                clock.advance(by: .milliseconds(250))
                try await group.waitForAll()
            }
            #expect(await ring.newest == 2)
            #expect(Self.ids(try await ring.read(after: 0, filter: EventFilter(), limit: 100)) == [2])
            #expect(reads.withLock { $0 } == 2, "five readers that timed out together read the database \(reads.withLock { $0 } - 1) times")
        }
    }

    @Test func aCursorOlderThanTheRingIsSentToTheDatabase() async throws {
        try await TestBackend.sqlite.withStore { store in
            let ring = EventRing(store: store, capacity: 3)
            _ = try await ring.read(after: 0, filter: EventFilter(), limit: 100)
            for _ in 0..<5 { await ring.publish([try await Self.storeEnter(store)]) }
            guard case .older(let floor) = try await ring.read(after: 0, filter: EventFilter(), limit: 100) else {
                Issue.record("a reader at 0 was served from a ring that dropped events 1 and 2")
                return
            }
            #expect(floor == 2)
            #expect(Self.ids(try await ring.read(after: 2, filter: EventFilter(), limit: 100)) == [3, 4, 5])
            // After a deletion (an erased device) nothing behind is served from memory.
            await ring.invalidate()
            guard case .older = try await ring.read(after: 4, filter: EventFilter(), limit: 100) else {
                Issue.record("a reader behind was served from memory after a deletion")
                return
            }
            #expect(Self.ids(try await ring.read(after: 5, filter: EventFilter(), limit: 100)) == [])
        }
    }

    /// Every kind of row, and each filter the API takes: the ring answers what SQL answers.
    @Test func theRingsFilterIsTheDatabasesFilter() async throws {
        try await TestBackend.sqlite.withStore { store in
            let ring = EventRing(store: store)
            _ = try await ring.read(after: 0, filter: EventFilter(), limit: 100)
            let other = BeaconIdentity(uuid: Self.beacon.uuid, major: 2, minor: 7)
            let elsewhere = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 7)
            _ = try await Self.storeEnter(store, siteID: 1)
            _ = try await Self.storeEnter(store, identity: other, siteID: 1, gateway: "hall")
            _ = try await Self.storeEnter(store, identity: elsewhere, siteID: 2)
            try await store.database.transaction { db in
                let rows = [
                    EventRow(gatewayID: "door", kind: "roomEnter", identity: Self.beacon, siteID: 1, label: "tag", time: 2, recordedAt: 2,
                             room: "west", subjectKind: "beacon", subject: "\(Self.beacon.uuid.uuidString):1:7"),
                    EventRow(gatewayID: "phone-1", kind: "roomEnter", identity: nil, siteID: 1, label: "phone-1", time: 2, recordedAt: 2,
                             room: "west", subjectKind: "phone", subject: "phone-1"),
                ]
                for row in rows { _ = try await row.insert(db: db) }
                let zone = ApplicationOccurrence.Zone(id: 4, label: "Mordor", uuid: Self.beacon.uuid, major: 1, minor: 7)
                _ = try await ApplicationOccurrence(kind: .checkIn, time: 3, device: "phone-1", zone: zone, visitStart: 1)
                    .store(siteID: 1, now: 3, db: db)
                _ = try await ApplicationOccurrence(kind: .offersDelivered, time: 3, device: "phone-1",
                                                    offers: [.init(offerID: 1, zoneID: 4, title: "Tea", proximity: "near")])
                    .store(siteID: 1, now: 3, db: db)
            }
            let stored = try await store.events(after: 0)
            #expect(stored.count == 7)
            await ring.publish(stored)
            let filters = [
                EventFilter(), EventFilter(siteID: 1), EventFilter(siteID: 2), EventFilter(uuid: Self.beacon.uuid),
                EventFilter(uuid: Self.beacon.uuid, major: 1), EventFilter(uuid: Self.beacon.uuid, major: 1, minor: 7),
                EventFilter(uuid: Self.beacon.uuid, major: 2, minor: 7), EventFilter(gatewayID: "phone-1"),
                EventFilter(siteID: 1, uuid: Self.beacon.uuid, major: 1, minor: 7),
            ]
            for filter in filters {
                let fromDatabase = try await store.events(after: 0, filter: filter).map(\.id)
                #expect(Self.ids(try await ring.read(after: 0, filter: filter, limit: 100)) == fromDatabase, "\(filter)")
            }
        }
    }

    struct Enough: Error {}

    final class ReceivedIDs: Sendable {
        let ids: Mutex<[[Int]]>
        init(followers: Int) { ids = Mutex([[Int]](repeating: [], count: followers)) }
    }

    /// Twenty followers of the stream and forty batches, each entering a beacon: every follower
    /// gets every event in order, and the database is read once, for the ring's start, not once
    /// per follower per batch.
    @Test(.timeLimit(.minutes(10)))
    func manyFollowersAreServedFromTheRing() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let (gateway, _) = try await store.registerGateway(name: "door", siteID: office.site.id)
            let clock = TestClock()
            let server = ProximaServer(store: store, intervalClock: clock, clock: { 1_000 })
            _ = try await server.events.read(after: 0, filter: EventFilter(), limit: 1)
            let followers = 20, batches = 40
            let received = ReceivedIDs(followers: followers)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for follower in 0..<followers {
                    group.addTask {
                        do {
                            try await server.eventFeed(EventFilter(), lease: try server.streams.open(tokenID: follower)).run(after: 0, follow: true) { events in
                                let count = received.ids.withLock { all in
                                    all[follower] += events.filter { $0.kindName == "enter" }.map(\.id)
                                    return all[follower].count
                                }
                                if count >= batches { throw Enough() }
                            }
                        } catch is Enough {}
                    }
                }
                for batch in 0..<batches {
                    let identity = BeaconIdentity(uuid: office.mordor.identity.uuid, major: 9, minor: UInt16(batch))
                    let heard = Sighting(time: 999, receiver: "door", address: BluetoothAddress(rawValue: UInt64(batch + 1)), rssi: -60,
                                         frame: .iBeacon(IBeaconFrame(identity: identity)))
                    _ = try await server.ingestion.ingest(gatewayID: gateway.id, batch: SightingBatch(sequence: batch + 1, sightings: [heard]))
                }
                try await group.waitForAll()
            }
            // Only the enters are counted: the unregistered identities may raise a fleet alert too.
            let stored = try await store.events(after: 0).filter { $0.kindName == "enter" }.map(\.id)
            #expect(stored.count == batches)
            for ids in received.ids.withLock({ $0 }) {
                #expect(Array(ids.prefix(stored.count)) == stored)
            }
            let metrics = server.metrics.exposition()
            let reads = metrics.split(separator: "\n").first { $0.hasPrefix("proxima_event_stream_database_reads_total") }
            #expect(reads == "proxima_event_stream_database_reads_total 1", "\(String(describing: reads))")
            await server.shutdown()
        }
    }
}
