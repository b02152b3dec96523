import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Registry input tried from outside (issue 9, item 11): each case was accepted or altered
/// before and must now be refused naming the field, or survive a round trip whole.
@Suite("Registry hostile input")
struct RegistryHostileInputTests {
    static let nul = "\u{0}"

    @Test func aNameWithANulIsRefusedNotStoredCut() async throws {
        try await RouterHarness.with { harness, client in
            let body = #"{"name":"Evil\u0000Corp","proximityUUIDs":["B9407F30-F5F8-466E-AFF9-25556B57FE6D"]}"#
            try await client.execute(uri: "/v1/organisations", method: .post, headers: harness.headers(.operator), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "name")
                #expect(response.text.contains("U+0000 at character 4"))
            }
            let site = #"{"organisationID":"\#(harness.office.organisation.id.uuidString)","name":"Shop\u0007"}"#
            try await client.execute(uri: "/v1/sites", method: .post, headers: harness.headers(.operator), body: ByteBuffer(string: site)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "name")
            }
            let names = try await harness.server.store.organisations().map(\.name)
            #expect(names == ["Nerdery"])
            #expect(try await harness.server.store.sites().count == 1)
        }
    }

    @Test func aMinorOutsideItsCategoryIsRefused() async throws {
        try await RouterHarness.with { harness, client in
            let body = #"{"siteID":\#(harness.office.site.id),"category":1,"minor":5000,"label":"Till","position":{"x":1,"y":1},"measuredPower":-59,"txPower":0,"battery":"AA","state":"planned"}"#
            try await client.execute(uri: "/v1/beacons", method: .post, headers: harness.headers(.operator), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "minor")
                #expect(response.text.contains("1001…1999, found 5000"))
            }
            var directory = try await harness.server.store.directory(organisationID: harness.office.organisation.id)
            directory.locations[0].minors.append(.init(minor: 2000, category: 2, label: "Loo", x: 1, y: 1))
            try await client.execute(uri: "/v1/directory", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(data: try JSONEncoder().encode(directory))) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "locations[0].minors[1].minor")
            }
            #expect(try await harness.server.store.zones(siteID: harness.office.site.id).map(\.minor) == [1001])
        }
    }

    /// A second organisation with a site whose zone the first organisation's import targets.
    static func otherOrganisation(_ store: Store) async throws -> (Organisation, Site) {
        let other = try await store.createOrganisation(name: "Estimote", proximityUUIDs: [Fixture.secondUUID])
        let site = try await store.createSite(NewSite(organisationID: other.id, name: "Warsaw", address: "Ul. 1", planWidth: 10, planHeight: 10))
        _ = try await store.addBeacon(NewBeacon(siteID: site.id, category: 1, label: "Kitchen", position: Position(x: 1, y: 1)))
        return (other, site)
    }

    @Test func aDirectoryImportTouchesOnlyTheOrganisationItNames() async throws {
        try await RouterHarness.with { harness, client in
            let store = harness.server.store
            let (_, otherSite) = try await Self.otherOrganisation(store)
            var directory = try await store.directory(organisationID: harness.office.organisation.id)
            directory.locations.append(.init(uuid: Fixture.secondUUID, major: otherSite.major, name: "Taken over", address: "",
                                             planWidth: 0, planHeight: 0, minors: [.init(minor: 1001, category: 1, label: "HACKED", x: 0, y: 0)]))
            try await client.execute(uri: "/v1/directory", method: .put, headers: harness.headers(.operator),
                                     body: ByteBuffer(data: try JSONEncoder().encode(directory))) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorField == "locations[1].uuid")
            }
            let csv = "uuid,major,site,minor,category,label,x,y\n"
                + "\(Fixture.nerderyUUID.uuidString),1,Bloomington Office,1001,1,Mordor,12,8\n"
                + "\(Fixture.secondUUID.uuidString),\(otherSite.major),Taken over,1001,1,HACKED,0,0\n"
            try await client.execute(uri: "/v1/directory?organisation=\(harness.office.organisation.id.uuidString)", method: .put,
                                     headers: harness.headers(.operator, contentType: "text/csv"), body: ByteBuffer(string: csv)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "line 3, column uuid")
            }
            #expect(try await store.zones(siteID: otherSite.id).map(\.label) == ["Kitchen"])
            #expect(try await store.site(id: otherSite.id).name == "Warsaw")
        }
    }

    @Test func theCSVDirectoryRoundTripKeepsAddressAndPlanSize() async throws {
        try await RouterHarness.with { harness, client in
            let organisation = harness.office.organisation.id.uuidString
            let before = try await harness.server.store.directory(organisationID: harness.office.organisation.id)
            #expect(before.locations.first?.address == "9555 James Ave S, Bloomington, MN")
            let csv = try await client.execute(uri: "/v1/organisations/\(organisation)/directory?format=csv", method: .get,
                                               headers: harness.headers(.readOnly)) { $0.text }
            try await client.execute(uri: "/v1/directory?organisation=\(organisation)", method: .put,
                                     headers: harness.headers(.operator, contentType: "text/csv"), body: ByteBuffer(string: csv)) { response in
                #expect(response.status == .ok)
                let after = try response.json(Directory.self)
                #expect(after == before)
            }
        }
    }

    @Test func everyRefusedBatchIsCounted() async throws {
        var configuration = ServerConfiguration()
        configuration.maxSightingsPerBatch = 2
        try await RouterHarness.with(configuration: configuration) { harness, client in
            let gateway = harness.headers(.gateway)
            try await client.execute(uri: "/v1/sightings", method: .post, headers: gateway, body: ByteBuffer(string: #"{"sightings":"none"}"#)) { response in
                #expect(response.status == .badRequest)
            }
            let tooMany = try harness.batchBody((0..<3).map { harness.sighting(Double($0)) })
            try await client.execute(uri: "/v1/sightings", method: .post, headers: gateway, body: tooMany) { response in
                #expect(response.status == .contentTooLarge)
            }
            try await client.execute(uri: "/v1/sightings", method: .post, headers: gateway, body: try harness.batchBody([harness.sighting(1)])) { response in
                #expect(response.status == .accepted)
            }
            let metrics = try await client.execute(uri: "/metrics", method: .get) { $0.text }
            #expect(metrics.contains("proxima_batches_refused_total 2\n"))
            #expect(metrics.contains("proxima_batches_ingested_total 1\n"))
        }
    }

    @Test func onlyAdminsSeeWebhookCredentials() async throws {
        try await RouterHarness.with { harness, client in
            let url = "https://hook:s3cr3t-password@hooks.example.com/in?token=abcdef123456&site=1"
            let body = #"{"url":"\#(url)","secret":"0123456789abcdef"}"#
            try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .created)
            }
            for role in [Role.readOnly, .operator] {
                let text = try await client.execute(uri: "/v1/webhooks", method: .get, headers: harness.headers(role)) { $0.text }
                #expect(!text.contains("s3cr3t"), "\(role.rawValue) sees the password")
                #expect(!text.contains("abcdef123456"), "\(role.rawValue) sees the query token")
                #expect(!text.contains("0123456789abcdef"), "\(role.rawValue) sees the signing secret")
                #expect(text.contains("hooks.example.com"))
            }
            let admin = try await client.execute(uri: "/v1/webhooks", method: .get, headers: harness.headers(.admin)) { try $0.json([Webhook].self) }
            #expect(admin.map(\.url) == [url])
        }
    }
}
