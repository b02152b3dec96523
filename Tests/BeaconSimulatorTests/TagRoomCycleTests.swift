import BeaconSimulator
import Foundation
import Testing

/// `LocationEvaluation.tagRoomCycle`: carried beacons' room filters run on their own locators
/// every half second, while every fix in the position table, the phones' rooms and the deciders
/// fed packet by packet or fix by fix stay as they were.
@Suite struct TagRoomCycleTests {
    static func report(tagRoomCycle: Double) throws -> LocationReport {
        var scenario = try LocationSeedsTests.office(seed: 7)
        // Long enough for the nurse's tag to leave office B (its first change, near 93 s).
        scenario.duration = 120
        var evaluation = LocationEvaluation(scenario: scenario)
        evaluation.surveySpacing = 0
        evaluation.tagRoomCycle = tagRoomCycle
        return evaluation.run()
    }

    @Test func onlyTheTagsRoomFiltersFollowTheRoomCycle() throws {
        let half = try Self.report(tagRoomCycle: 0.5)
        let whole = try Self.report(tagRoomCycle: 1)
        #expect(half.tagRoomCycle == 0.5 && whole.tagRoomCycle == 1 && half.cycle == 1)
        #expect(half.positions == whole.positions, "fixes stay once a second")
        #expect(half.rooms.count == whole.rooms.count)
        var differing = 0
        for room in half.rooms {
            let other = try #require(whole.rooms.first { $0.direction == room.direction && $0.decider == room.decider })
            if room.direction == .phones || !room.decider.hasPrefix("room filter") {
                #expect(room == other, "\(room.direction) \(room.decider)")
            } else if room != other {
                differing += 1
            }
        }
        #expect(differing > 0, "the tags' room filters decide on another cadence")
        #expect(half.text.contains("carried beacons' room filters every 0.5 s"))
        #expect(!whole.text.contains("carried beacons' room filters every"))
    }

    @Test func theRoomCycleIsBounded() throws {
        var evaluation = LocationEvaluation(scenario: try LocationSeedsTests.office(seed: 7))
        #expect(evaluation.tagRoomCycle == 0.5)
        evaluation.tagRoomCycle = 0
        #expect(evaluation.tagRoomCycle == LocationEvaluation.tagRoomCycles.lowerBound)
        evaluation.tagRoomCycle = 1e9
        #expect(evaluation.tagRoomCycle == LocationEvaluation.tagRoomCycles.upperBound)
        evaluation.tagRoomCycle = .nan
        #expect(evaluation.tagRoomCycle == 0.5)
    }

    @Test func aReportWithoutTheRoomCycleStillDecodes() throws {
        let report = try Self.report(tagRoomCycle: 0.5)
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        #expect(object["tagRoomCycle"] as? Double == 0.5)
        object["tagRoomCycle"] = nil
        let decoded = try JSONDecoder().decode(LocationReport.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded.tagRoomCycle == nil && decoded.rooms == report.rooms)
        #expect(!decoded.text.contains("carried beacons' room filters every"))
    }
}
