@testable import BeaconServer
import BeaconTesting
import Foundation
import NIOCore
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 15: administrative changes are recorded with who, what and when, readable by admins only.
@Suite struct AuditLogTests {
    typealias Call = AuditLogTests

    /// Two servers on one database (on PostgreSQL, two connections), as two instances would be.
    static func withTwoServers(_ backend: TestBackend,
                               _ body: @Sendable (Store, any TestClientProtocol, any TestClientProtocol) async throws -> Void) async throws {
        let location = try backend.location()
        let first = try await ProximaDatabase.open(location)
        let second = try await ProximaDatabase.open(location)
        let firstServer = ProximaServer(store: Store(database: first))
        let secondServer = ProximaServer(store: Store(database: second))
        do {
            try await Application(router: firstServer.makeRouter()).test(.router) { firstClient in
                try await Application(router: secondServer.makeRouter()).test(.router) { secondClient in
                    try await body(Store(database: first), firstClient, secondClient)
                }
            }
        } catch {
            await firstServer.shutdown(); await secondServer.shutdown()
            await first.close(); await second.close()
            throw error
        }
        await firstServer.shutdown(); await secondServer.shutdown()
        await first.close(); await second.close()
        if case .sqliteFile(let path) = location {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    static func call(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String,
                     token: String?, json: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.executeRequest(uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }


    @Test(arguments: TestBackend.available)
    func changesAreRecordedWithWhoWhatAndWhenAndReadsAndFailuresAreNot(backend: TestBackend) async throws {
        try await Call.withTwoServers(backend) { store, first, second in
            let admin = try await store.issueToken(name: "head office", role: .admin)
            let staff = try await store.issueToken(name: "front desk", role: .operator)
            let reader = try await store.issueToken(name: "auditor", role: .readOnly)
            let before = Date().timeIntervalSince1970

            let created = try await Call.call(first, .post, "/v1/organisations", token: staff.token,
                                              json: #"{"name":"Nerdery","proximityUUIDs":["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]}"#)
            #expect(created.status == .created, "\(created.text)")
            #expect(try await Call.call(first, .get, "/v1/organisations", token: staff.token).status == .ok)
            let refused = try await Call.call(first, .post, "/v1/organisations", token: staff.token, json: #"{"name":""}"#)
            #expect(refused.status.code >= 400)
            #expect(try await Call.call(first, .delete, "/v1/tokens/\(reader.id)", token: admin.token).status == .ok)

            let page = try await Call.call(second, .get, "/v1/audit", token: admin.token).json(AuditPage.self)
            #expect(page.entries.map(\.method) == ["DELETE", "POST"])
            let revocation = try #require(page.entries.first)
            #expect(revocation.tokenID == admin.id)
            #expect(revocation.tokenName == "head office")
            #expect(revocation.path == "/v1/tokens/\(reader.id)")
            #expect(revocation.status == 200)
            #expect(revocation.time >= before && revocation.time <= Date().timeIntervalSince1970)
            let creation = try #require(page.entries.last)
            #expect(creation.tokenID == staff.id)
            #expect(creation.role == .operator)
            #expect(creation.path == "/v1/organisations")
        }
    }

    @Test func onlyAdminsReadTheLogInBoundedPages() async throws {
        try await Call.withTwoServers(.sqlite) { store, first, _ in
            let admin = try await store.issueToken(name: "admin", role: .admin)
            let staff = try await store.issueToken(name: "front desk", role: .operator)
            #expect(try await Call.call(first, .get, "/v1/audit", token: nil).status == .unauthorized)
            #expect(try await Call.call(first, .get, "/v1/audit", token: staff.token).status == .forbidden)
            for number in 1...3 {
                let principal = Principal(tokenID: staff.id, name: "front desk", role: .operator, gatewayID: nil)
                try await store.recordAudit(principal: principal, method: "PUT", path: "/v1/categories/\(number)", status: 200)
            }
            let page = try await Call.call(first, .get, "/v1/audit?limit=2", token: admin.token).json(AuditPage.self)
            #expect(page.entries.map(\.path) == ["/v1/categories/3", "/v1/categories/2"])
            let rest = try await Call.call(first, .get, "/v1/audit?limit=2&before=\(try #require(page.next))", token: admin.token).json(AuditPage.self)
            #expect(rest.entries.map(\.path) == ["/v1/categories/1"])
            #expect(rest.next == nil)
            let bad = try await Call.call(first, .get, "/v1/audit?before=-4", token: admin.token)
            #expect(bad.status == .badRequest)
            #expect(bad.errorField == "before")
            let tooMany = try await Call.call(first, .get, "/v1/audit?limit=501", token: admin.token)
            #expect(tooMany.errorField == "limit")
        }
    }
}
