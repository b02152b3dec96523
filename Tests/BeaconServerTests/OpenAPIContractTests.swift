import BeaconKit
@testable import BeaconServer
import Foundation
import Testing

/// The `required` lists of /openapi.yaml say what the server's decoders actually require and
/// what its answers always carry (issue 9, item 11: beacon fields the server requires were
/// marked optional).
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    /// One schema of the document: its `required` list and its property names, read from the
    /// indentation of components/schemas (the document's own layout, not a general YAML parser).
    struct Schema {
        var required: Set<String>
        var properties: Set<String>

        init(named name: String, in document: String) throws {
            let lines = document.components(separatedBy: "\n")
            let start = try #require(lines.firstIndex(of: "    \(name):"), "no schema \(name) in openapi.yaml")
            var required: Set<String> = []
            var properties: Set<String> = []
            var inProperties = false
            for line in lines[(start + 1)...] {
                let indent = line.prefix { $0 == " " }.count
                if !line.trimmingCharacters(in: .whitespaces).isEmpty, indent <= 4 { break }
                if indent == 6 {
                    inProperties = line.hasPrefix("      properties:")
                    if line.hasPrefix("      required: [") {
                        let list = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }
                        required = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                    }
                } else if indent == 8, inProperties, let colon = line.firstIndex(of: ":") {
                    properties.insert(line[..<colon].trimmingCharacters(in: .whitespaces))
                }
            }
            self.required = required
            self.properties = properties
        }
    }

    struct RequestCase: Sendable, CustomTestStringConvertible {
        var schema: String
        var complete: String
        var decode: @Sendable (Data) throws -> Void
        var testDescription: String { schema }
    }

    static let requests: [RequestCase] = [
        RequestCase(schema: "NewBeacon",
                    complete: #"{"siteID":1,"category":1,"label":"Door","position":{"x":1,"y":2},"minor":1001,"measuredPower":-59,"txPower":0,"battery":"CR2477","installedOn":"2014-03-01","state":"planned"}"#,
                    decode: { _ = try JSONDecoder().decode(NewBeacon.self, from: $0) }),
        RequestCase(schema: "NewSite",
                    complete: #"{"organisationID":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":2,"name":"Shop","address":"High St","planWidth":10,"planHeight":5,"retainEvents":3600}"#,
                    decode: { _ = try JSONDecoder().decode(NewSite.self, from: $0) }),
        RequestCase(schema: "SiteChange", complete: #"{"retainEvents":3600}"#,
                    decode: { _ = try JSONDecoder().decode(SiteChange.self, from: $0) }),
        RequestCase(schema: "Position", complete: #"{"x":1,"y":2}"#,
                    decode: { _ = try JSONDecoder().decode(Position.self, from: $0) }),
        RequestCase(schema: "PlannedPosition", complete: #"{"category":1,"label":"Door","x":1,"y":2,"measuredPower":-59,"txPower":0,"battery":"AA"}"#,
                    decode: { _ = try JSONDecoder().decode(PlannedPosition.self, from: $0) }),
        RequestCase(schema: "NewQueue", complete: #"{"name":"Counter","entryZoneID":1,"serviceZoneID":2,"abandonAfter":120}"#,
                    decode: { _ = try JSONDecoder().decode(NewQueue.self, from: $0) }),
        RequestCase(schema: "CheckinZoneRule", complete: #"{"dwell":60,"absence":600}"#,
                    decode: { _ = try JSONDecoder().decode(CheckinZoneRule.self, from: $0) }),
    ]

    /// Leaving out a field fails to decode exactly when the document lists it as required.
    @Test(arguments: requests)
    func requiredRequestFieldsAreTheOnesTheDecoderNeeds(request: RequestCase) throws {
        let schema = try Schema(named: request.schema, in: ProximaServer.openAPIDocument)
        let complete = try #require(JSONSerialization.jsonObject(with: Data(request.complete.utf8)) as? [String: Any])
        #expect(Set(complete.keys) == schema.properties, "the example must use exactly the documented properties")
        try request.decode(Data(request.complete.utf8))
        for field in schema.properties.sorted() {
            var partial = complete
            partial.removeValue(forKey: field)
            let data = try JSONSerialization.data(withJSONObject: partial)
            let decodes = (try? request.decode(data)) != nil
            #expect(decodes != schema.required.contains(field),
                    "\(request.schema).\(field): documented \(schema.required.contains(field) ? "required" : "optional"), but the server \(decodes ? "accepts" : "refuses") a body without it")
        }
    }

    /// Every field an answer always carries is listed as required.
    @Test func answersListWhatTheyAlwaysCarry() async throws {
        try await TestBackend.sqlite.withStore { store in
            let office = try await Fixture.office(store)
            let zone = try #require(try await store.zones(siteID: office.site.id).first)
            var planned = office.mordor
            planned.installedOn = nil
            let answers: [(String, any Encodable)] = [
                ("Organisation", office.organisation), ("Site", office.site), ("Beacon", planned), ("Zone", zone),
                ("Category", Category(code: 1, name: "Conference Room")),
                ("Queue", Queue(id: 1, siteID: 1, name: "Counter", entryZoneID: 1, serviceZoneID: 2, abandonAfter: 120, createdAt: 0)),
                ("CheckinZone", CheckinZone(zoneID: 1, siteID: 1, dwell: 60, absence: 600, updatedAt: 0)),
                ("WaitSummary", WaitSummary(from: 0, to: 1, served: 0, abandoned: 0)),
            ]
            for (name, value) in answers {
                let schema = try Schema(named: name, in: ProximaServer.openAPIDocument)
                let object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
                #expect(Set(object.keys) == schema.required, "\(name): always carries \(object.keys.sorted()), documents \(schema.required.sorted()) as required")
            }
        }
    }
}
