@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `retainEvents` on a site through the API: set on creation or with `PATCH /v1/sites/{id}`,
/// read back, cleared with null, and refused below a minute or when not a number.
@Suite struct SiteRetentionRouteTests {
    struct SiteBody: Decodable {
        var id: Int
        var retainEvents: Double?
    }

    static func patch(_ body: String, site: Int, harness: RouterHarness, client: any TestClientProtocol) async throws -> TestResponse {
        try await client.execute(uri: "/v1/sites/\(site)", method: .patch, headers: harness.headers(.operator), body: ByteBuffer(string: body)) { $0 }
    }

    static func listed(_ site: Int, harness: RouterHarness, client: any TestClientProtocol) async throws -> SiteBody? {
        try await client.execute(uri: "/v1/sites", method: .get, headers: harness.headers(.readOnly)) { response in
            try response.json([SiteBody].self).first { $0.id == site }
        }
    }

    @Test func setReadBackAndClear() async throws {
        try await RouterHarness.with { harness, client in
            let site = harness.office.site.id
            #expect(try await Self.listed(site, harness: harness, client: client)?.retainEvents == nil)

            let set = try await Self.patch(#"{"retainEvents":3600}"#, site: site, harness: harness, client: client)
            #expect(set.status == .ok)
            #expect(try set.json(SiteBody.self).retainEvents == 3_600)
            #expect(try await Self.listed(site, harness: harness, client: client)?.retainEvents == 3_600)

            let untouched = try await Self.patch("{}", site: site, harness: harness, client: client)
            #expect(try untouched.json(SiteBody.self).retainEvents == 3_600)

            let cleared = try await Self.patch(#"{"retainEvents":null}"#, site: site, harness: harness, client: client)
            #expect(cleared.status == .ok)
            #expect(!cleared.text.contains("retainEvents"))
            #expect(try await Self.listed(site, harness: harness, client: client)?.retainEvents == nil)
        }
    }

    @Test func aNewSiteCarriesItsRetention() async throws {
        try await RouterHarness.with { harness, client in
            let body = #"{"organisationID":"\#(harness.office.organisation.id.uuidString)","name":"Kiosk","retainEvents":7200}"#
            let created = try await client.execute(uri: "/v1/sites", method: .post, headers: harness.headers(.operator), body: ByteBuffer(string: body)) { $0 }
            #expect(created.status == .created)
            let site = try created.json(SiteBody.self)
            #expect(site.retainEvents == 7_200)
            #expect(try await Self.listed(site.id, harness: harness, client: client)?.retainEvents == 7_200)
        }
    }

    /// Below a minute is a value the field cannot take (422, as `planWidth`); not a number is a
    /// malformed body (400). Both name the field and change nothing.
    @Test(arguments: [("30", HTTPResponse.Status.unprocessableContent), (#""abc""#, .badRequest), ("-3600", .unprocessableContent)])
    func refusedValuesNameTheField(value: String, status: HTTPResponse.Status) async throws {
        try await RouterHarness.with { harness, client in
            let site = harness.office.site.id
            let changed = try await Self.patch(#"{"retainEvents":\#(value)}"#, site: site, harness: harness, client: client)
            #expect(changed.status == status)
            #expect(changed.errorField == "retainEvents")
            #expect(try await Self.listed(site, harness: harness, client: client)?.retainEvents == nil)

            let body = #"{"organisationID":"\#(harness.office.organisation.id.uuidString)","name":"Kiosk","retainEvents":\#(value)}"#
            let created = try await client.execute(uri: "/v1/sites", method: .post, headers: harness.headers(.operator), body: ByteBuffer(string: body)) { $0 }
            #expect(created.status == status)
            #expect(created.errorField == "retainEvents")
        }
    }

    @Test func anUnknownSiteIsNotFound() async throws {
        try await RouterHarness.with { harness, client in
            let changed = try await Self.patch(#"{"retainEvents":3600}"#, site: 999_999, harness: harness, client: client)
            #expect(changed.status == .notFound)
        }
    }
}
