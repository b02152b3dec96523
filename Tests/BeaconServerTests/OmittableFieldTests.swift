@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Optional body fields that openapi.yaml documents as their type alone may be left out but not
/// sent as `null`: schemathesis found a plan position with `"battery": null` and a webhook with
/// `"siteID": null` accepted although the document refuses them.
@Suite("Omittable fields")
struct OmittableFieldTests {
    @Test(arguments: ["battery", "measuredPower", "txPower"])
    func aPlanPositionWithANullFieldIsRefusedNamingIt(field: String) async throws {
        try await RouterHarness.with { harness, client in
            let body = #"[{"category": 1, "label": "Door", "x": 1, "y": 2}, {"category": 1, "label": "Till", "x": 3, "y": 4, "\#(field)": null}]"#
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/plan?format=json", method: .post,
                                     headers: harness.headers(.admin), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "[1].\(field)")
                #expect(response.text.contains("found null"))
            }
        }
    }

    @Test func aPlanPositionWithoutTheOptionalFieldsOrWithValuesIsTaken() async throws {
        try await RouterHarness.with { harness, client in
            let body = #"[{"category": 1, "label": "Door", "x": 1, "y": 2}, {"category": 1, "label": "Till", "x": 3, "y": 4, "battery": "CR2032", "measuredPower": -61, "txPower": 4}]"#
            try await client.execute(uri: "/v1/sites/\(harness.office.site.id)/plan?format=json", method: .post,
                                     headers: harness.headers(.admin), body: ByteBuffer(string: body)) { response in
                #expect(response.status == .created, "\(response.text)")
                struct Configured: Decodable { var label: String; var measuredPower: Int }
                let configured = try response.json([Configured].self)
                #expect(configured.map(\.label) == ["Door", "Till"])
                #expect(configured.last?.measuredPower == -61)
            }
        }
    }

    @Test func aWebhookWithANullSiteIsRefusedAndOneWithoutASiteIsTaken() async throws {
        try await RouterHarness.with { harness, client in
            let null = #"{"url": "http://0", "secret": "0123456789abcdef", "siteID": null}"#
            try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: null)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "siteID")
            }
            let absent = #"{"url": "http://0", "secret": "0123456789abcdef"}"#
            try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: absent)) { response in
                #expect(response.status == .created, "\(response.text)")
                let hook = try response.json(Webhook.self)
                #expect(hook.siteID == nil)
            }
            let site = #"{"url": "https://hooks.example/x", "secret": "0123456789abcdef", "siteID": \#(harness.office.site.id)}"#
            try await client.execute(uri: "/v1/webhooks", method: .post, headers: harness.headers(.admin), body: ByteBuffer(string: site)) { response in
                #expect(response.status == .created)
                let hook = try response.json(Webhook.self)
                #expect(hook.siteID == harness.office.site.id)
            }
        }
    }

    @Test func theDecoderHelperTellsAbsentFromNull() throws {
        struct Probe: Decodable {
            var value: Int?
            enum CodingKeys: String, CodingKey { case value }
            init(from decoder: any Decoder) throws {
                value = try decoder.container(keyedBy: CodingKeys.self).decodeOmittable(Int.self, forKey: .value)
            }
        }
        #expect(try JSONDecoder().decode(Probe.self, from: Data("{}".utf8)).value == nil)
        #expect(try JSONDecoder().decode(Probe.self, from: Data(#"{"value": 3}"#.utf8)).value == 3)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Probe.self, from: Data(#"{"value": null}"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Probe.self, from: Data(#"{"value": "3"}"#.utf8)) }
    }
}

/// Webhook URLs: the server refuses exactly what openapi.yaml's pattern refuses (schemathesis
/// found `https://pb\<U+0015>Z?(` allowed by the old pattern and refused by the server).
@Suite("Webhook URLs")
struct WebhookURLTests {
    @Test func theDocumentStatesTheServersPattern() {
        let yaml = WebhookURL.pattern.replacingOccurrences(of: "'", with: "''")
        #expect(ProximaServer.openAPIDocument.contains("url: { type: string, maxLength: \(WebhookURL.maxLength), pattern: '\(yaml)' }"))
    }

    @Test(arguments: ["http://0", "https://hooks.example/proxima", "https://user:pa%73s@hooks.example:8443/in?site=1#top",
                      "http://192.0.2.7:80/", "http://a.", "https://h.example/!$&'()*+,;=:@/?#-"])
    func acceptedURLs(url: String) throws {
        try WebhookURL.check(url)
    }

    @Test(arguments: ["https://pb\\\u{15}Z?(", "ftp://hooks.example", "http://", "http://a b", "http://a_b", "http://[::1]/",
                      "http://h.example/%zz", "http://h.example:65536", "https://h.example/\u{00E9}", "http://h.example/\"",
                      "http://h.example/" + String(repeating: "a", count: 2048)])
    func refusedURLs(url: String) {
        #expect(throws: RegistryError.self) { try WebhookURL.check(url) }
    }
}
