import BeaconKit
import BeaconServer
import Testing

/// `?region=` is read by the same parser as `--region`, and its refusals name the part.
@Suite struct EventFilterParsingTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test(arguments: [uuid, "\(uuid):3", "\(uuid):3:4"])
    func acceptsWhatTheRegionParserAccepts(text: String) throws {
        let filter = try EventFilter(site: nil, region: text)
        let constraint = try IdentityConstraint(parsing: text)
        #expect(filter.uuid == constraint.uuid && filter.major == constraint.major && filter.minor == constraint.minor)
    }

    @Test(arguments: [("nonsense", "uuid"), ("\(uuid):x", "major"), ("\(uuid):1:99999", "minor"), ("\(uuid):1:2:3", "region")])
    func refusalsNameThePart(text: String, part: String) {
        do {
            _ = try EventFilter(site: nil, region: text)
            Issue.record("'\(text)' must be refused")
        } catch {
            #expect(error.field == "region")
            #expect(error.reason.hasPrefix("invalid \(part) "))
        }
    }
}
