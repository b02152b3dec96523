import BeaconKit
import Foundation
import Testing

@Suite struct IdentityConstraintTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test(arguments: [uuid, "\(uuid):0", "\(uuid):7:65535"])
    func readsBackWhatItWrites(text: String) throws {
        let constraint = try IdentityConstraint(parsing: text)
        #expect(constraint.description == text)
        #expect(try BeaconRegion(parsing: text).constraintText == text)
    }

    /// Each refusal names the part that is wrong.
    @Test(arguments: [
        ("nope", "uuid"),
        ("\(uuid):70000", "major"),
        ("\(uuid)::4", "major"),
        ("\(uuid):-1", "major"),
        ("\(uuid):1:x", "minor"),
        ("\(uuid):1:65536", "minor"),
        ("\(uuid):1:2:3", "region"),
        ("", "uuid"),
    ])
    func refusalsNameThePart(text: String, field: String) {
        do {
            _ = try IdentityConstraint(parsing: text)
            Issue.record("'\(text)' must be refused")
        } catch {
            #expect(error.field == field)
            #expect(error.description.hasPrefix("invalid \(field) "))
        }
        // The region parser refuses the same texts, with the same reason.
        do {
            _ = try BeaconRegion(parsing: text)
            Issue.record("'\(text)' must be refused as a region")
        } catch {
            #expect(error.reason.hasPrefix("invalid \(field) "))
        }
    }

    @Test func aLongInputIsQuotedShort() {
        let text = "\(Self.uuid):" + String(repeating: "9", count: 10_000)
        do {
            _ = try IdentityConstraint(parsing: text)
            Issue.record("must be refused")
        } catch {
            #expect(error.value.count == 80)
        }
    }

    @Test func matchesByUUIDThenMajorThenMinor() throws {
        let identity = BeaconIdentity(uuid: UUID(uuidString: Self.uuid)!, major: 7, minor: 9)
        #expect(try IdentityConstraint(parsing: Self.uuid).matches(identity))
        #expect(try IdentityConstraint(parsing: "\(Self.uuid):7:9").matches(identity))
        #expect(try !IdentityConstraint(parsing: "\(Self.uuid):7:8").matches(identity))
        #expect(try !IdentityConstraint(parsing: "\(Self.uuid):6").matches(identity))
    }
}
