import BeaconTesting
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Issue 15: tokens that expire, and revocation that cuts a token off at once.
@Suite struct TokenLifecycleTests {
    struct Issued: Decodable { var id: Int; var token: String; var expiresAt: Double? }

    @Test func aRevokedTokenIsRefusedAtOnceEvenAfterItWasRemembered() async throws {
        try await RouterHarness.with { harness, client in
            let expiry = Date().timeIntervalSince1970 + 3_600
            var issued: Issued?
            try await client.execute(uri: "/v1/tokens", method: .post, headers: harness.headers(.admin),
                                     body: ByteBuffer(string: #"{"name":"night shift","role":"operator","expiresAt":\#(expiry)}"#)) { response in
                #expect(response.status == .created, "\(response.text)")
                issued = try response.json(Issued.self)
            }
            let token = try #require(issued)
            #expect(token.expiresAt == expiry)
            var bearer: HTTPFields = [.authorization: "Bearer \(token.token)"]
            bearer[.contentType] = "application/json"
            // Used once, so this instance remembers it.
            try await client.execute(uri: "/v1/sites", method: .get, headers: bearer) { #expect($0.status == .ok) }

            try await client.execute(uri: "/v1/tokens", method: .get, headers: harness.headers(.admin)) { response in
                #expect(response.status == .ok)
                #expect(!response.text.contains(token.token), "the list must not hold secrets")
                #expect(!response.text.contains("hash"))
                let records = try response.json([TokenRecord].self)
                #expect(records.first?.id == token.id, "newest first")
                #expect(records.first { $0.id == token.id }?.expiresAt == expiry)
            }
            try await client.execute(uri: "/v1/tokens/\(token.id)", method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status == .ok, "\(response.text)")
                let record = try response.json(TokenRecord.self)
                #expect(record.revokedAt != nil)
            }
            try await client.execute(uri: "/v1/sites", method: .get, headers: bearer) { response in
                #expect(response.status == .unauthorized, "a revoked token still worked")
            }
        }
    }

    @Test func anExpiredTokenIsRefused() async throws {
        try await RouterHarness.with { harness, client in
            let store = harness.server.store
            let now = Date().timeIntervalSince1970
            let lapsed = try await store.issueToken(name: "yesterday", role: .readOnly, expiresAt: now - 1)
            let later = try await store.issueToken(name: "until noon", role: .readOnly, expiresAt: now + 600)
            try await client.execute(uri: "/v1/sites", method: .get, headers: [.authorization: "Bearer \(lapsed.token)"]) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v1/sites", method: .get, headers: [.authorization: "Bearer \(later.token)"]) { response in
                #expect(response.status == .ok)
            }
            #expect(try await store.authenticate(token: later.token, now: now + 599) != nil)
            #expect(try await store.authenticate(token: later.token, now: now + 601) == nil)
        }
    }

    @Test func theTokenRoutesNeedAnAdminAndNameWhatTheyRefuse() async throws {
        try await RouterHarness.with { harness, client in
            for (method, uri) in [(HTTPRequest.Method.get, "/v1/tokens"), (.delete, "/v1/tokens/1")] {
                try await client.execute(uri: uri, method: method, headers: harness.headers(nil)) { #expect($0.status == .unauthorized) }
                for role in [Role.operator, .readOnly, .gateway] {
                    try await client.execute(uri: uri, method: method, headers: harness.headers(role)) { response in
                        #expect(response.status == .forbidden, "\(role) \(uri)")
                        #expect(response.errorField == "Authorization")
                    }
                }
            }
            try await client.execute(uri: "/v1/tokens/abc", method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "id")
            }
            try await client.execute(uri: "/v1/tokens/99999", method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status == .notFound)
                #expect(response.errorField == "id")
            }
            try await client.execute(uri: "/v1/tokens", method: .post, headers: harness.headers(.admin),
                                     body: ByteBuffer(string: #"{"name":"late","role":"operator","expiresAt":1000}"#)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "expiresAt")
            }
            // The harness has one admin token: revoking it would lock everyone out.
            let admin = try #require(try await harness.server.store.tokens(before: nil, limit: 100).first { $0.role == .admin })
            try await client.execute(uri: "/v1/tokens/\(admin.id)", method: .delete, headers: harness.headers(.admin)) { response in
                #expect(response.status == .conflict)
                #expect(response.errorField == "id")
            }
        }
    }

    /// Two servers on one PostgreSQL database: a token revoked through one is refused by the
    /// other on its very next request.
    @Test(.enabled(if: PostgresServer.shouldRun))
    func revocationReachesEveryInstanceOnOnePostgreSQL() async throws {
        let location = try TestBackend.postgres.location()
        let first = try await ProximaDatabase.open(location)
        let second = try await ProximaDatabase.open(location)
        do {
            let storeA = Store(database: first)
            let storeB = Store(database: second)
            let admin = try await storeA.issueToken(name: "admin", role: .admin)
            let gateway = try await storeA.issueToken(name: "reader", role: .readOnly)
            let serverA = ProximaServer(store: storeA)
            let serverB = ProximaServer(store: storeB)
            let appA = Application(router: serverA.makeRouter())
            let appB = Application(router: serverB.makeRouter())
            try await appB.test(.router) { clientB in
                for _ in 0..<3 {
                    try await clientB.execute(uri: "/v1/sites", method: .get, headers: [.authorization: "Bearer \(gateway.token)"]) { #expect($0.status == .ok) }
                }
                try await appA.test(.router) { clientA in
                    try await clientA.execute(uri: "/v1/tokens/\(gateway.id)", method: .delete, headers: [.authorization: "Bearer \(admin.token)"]) { response in
                        #expect(response.status == .ok, "\(response.text)")
                    }
                }
                try await clientB.execute(uri: "/v1/sites", method: .get, headers: [.authorization: "Bearer \(gateway.token)"]) { response in
                    #expect(response.status == .unauthorized, "the other instance still accepted a revoked token")
                }
            }
            await serverA.shutdown()
            await serverB.shutdown()
            await first.close()
            await second.close()
        } catch {
            await first.close()
            await second.close()
            throw error
        }
    }

    /// A remembered token is answered from memory for the cache's lifetime, and never past the
    /// token's own expiry: both measured on the injected clocks, not waited for.
    @Test func aRememberedTokenIsForgottenAfterItsLifetimeOrItsExpiry() async throws {
        try await TestBackend.sqlite.withStore { store in
            let clock = TestClock()
            let start = Date().timeIntervalSince1970
            let cache = TokenCache(lifetime: .seconds(30), clock: clock,
                                   wallClock: { start + Double(clock.now.offset.components.seconds) })
            let lasting = try await store.issueToken(name: "lasting", role: .operator)
            let expiring = try await store.issueToken(name: "expiring", role: .operator, expiresAt: start + 10)
            #expect(try await cache.principal(for: lasting.token, store: store)?.tokenID == lasting.id)
            #expect(try await cache.principal(for: expiring.token, store: store)?.tokenID == expiring.id)
            // Revoked behind the cache's back (as another instance would), so only memory answers now.
            _ = try await store.revokeToken(id: lasting.id)
            _ = try await store.revokeToken(id: expiring.id)
            clock.advance(by: .seconds(9))
            #expect(try await cache.principal(for: lasting.token, store: store)?.tokenID == lasting.id)
            #expect(try await cache.principal(for: expiring.token, store: store)?.tokenID == expiring.id)
            clock.advance(by: .seconds(1))
            #expect(try await cache.principal(for: expiring.token, store: store) == nil, "remembered past the token's expiry")
            #expect(try await cache.principal(for: lasting.token, store: store)?.tokenID == lasting.id)
            clock.advance(by: .seconds(20))
            #expect(try await cache.principal(for: lasting.token, store: store) == nil, "remembered past the cache's lifetime")
        }
    }
}
