@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `GET /v1/devices` answers a page at a time, so listing costs a page however many devices a
/// server holds; the pages, followed by their Link headers, hold every device once.
@Suite("Device list paging")
struct DeviceListPagingTests {
    @Test func pagesFollowedByLinkHeadersHoldEveryDeviceOnce() async throws {
        try await AppsHarness.with { app in
            var registered: [String] = []
            for index in 0..<7 { registered.append(try await app.register(name: "phone \(index)").0.id) }

            var seen: [String] = []
            var path: String? = "/v1/devices?site=\(app.office.site.id)&limit=3"
            var pages = 0
            while let next = path {
                let response = try await app.call(.get, next, as: .operator)
                try #require(response.status == .ok, "\(response.status) \(response.text)")
                let page = try response.json([Device].self)
                #expect(page.count <= 3)
                seen += page.map(\.id)
                pages += 1
                path = response.headers[.link].flatMap { link in
                    link.split(separator: ";").first.map { String($0.dropFirst().dropLast()) }
                }
                try #require(pages <= 10, "the Link headers do not end")
            }
            #expect(pages == 3)
            #expect(seen == registered.sorted(), "every device once, in id order")
        }
    }

    @Test(arguments: [("limit=0", "limit"), ("limit=1001", "limit"), ("limit=x", "limit"), ("after=not-a-uuid", "after"), ("site=x", "site")])
    func refusedQueriesNameTheirField(query: String, field: String) async throws {
        try await AppsHarness.with { app in
            let response = try await app.call(.get, "/v1/devices?\(query)", as: .operator)
            #expect(response.status == .badRequest)
            #expect(response.text.contains("\"field\":\"\(field)\""), "\(response.text)")
        }
    }
}
