import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `GET /v1/sites/{id}/plan-use`: the numbering plan's use per category, counted by the server.
@Suite struct PlanUseTests {
    @Test func countsUsedAndFreeMinorsPerCategoryAndTheNextOne() async throws {
        try await RouterHarness.with { harness, client in
            let store = harness.server.store
            let site = harness.office.site.id
            let before = try await store.planUse(siteID: site)
            let restroomsBefore = before.categories.first { $0.code == 2 }?.used ?? 0
            for label in ["North", "South"] {
                _ = try await store.addBeacon(NewBeacon(siteID: site, category: 2, label: label, position: Position(x: 1, y: 1)))
            }
            // Category 65 owns only 65001…65535: fill it.
            _ = try await store.configure(siteID: site, plan: (0..<535).map { PlannedPosition(category: 65, label: "Shelf \($0)", x: 1, y: 1) })

            try await client.execute(uri: "/v1/sites/\(site)/plan-use", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .ok, "\(response.text)")
                let use = try response.json(PlanUse.self)
                #expect(use.siteID == site)
                let restrooms = try #require(use.categories.first { $0.code == 2 })
                #expect(restrooms.used == restroomsBefore + 2)
                #expect(restrooms.capacity == 999 && restrooms.firstMinor == 2001 && restrooms.lastMinor == 2999)
                #expect(restrooms.free == 999 - restrooms.used)
                #expect(restrooms.nextMinor == 2001 + restrooms.used)
                let last = try #require(use.categories.first { $0.code == 65 })
                #expect(last.capacity == 535 && last.used == 535 && last.free == 0 && last.nextMinor == nil)
            }
            try await client.execute(uri: "/v1/sites/\(site)/plan-use", method: .get, headers: harness.headers(nil)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/v1/sites/\(site)/plan-use", method: .get, headers: harness.headers(.gateway)) { response in
                #expect(response.status == .forbidden)
                #expect(response.errorField == "Authorization")
            }
            try await client.execute(uri: "/v1/sites/abc/plan-use", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorField == "id")
            }
            try await client.execute(uri: "/v1/sites/99999/plan-use", method: .get, headers: harness.headers(.readOnly)) { response in
                #expect(response.status == .notFound, "\(response.text)")
                #expect(response.errorField != nil)
            }
        }
    }
}
