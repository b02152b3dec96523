import BeaconSimulator
import Foundation
import Testing

/// `LocationEvaluation.seeds`: runs over several seeds add their samples up before any figure
/// is taken, so a pooled report is the sum of the single runs, not an average of their summaries.
@Suite struct LocationSeedsTests {
    static func office(seed: UInt64) throws -> Scenario {
        var scenario = try Scenario.load(contentsOf: examplesDirectory.appendingPathComponent("office.json"))
        scenario.seed = seed
        scenario.duration = 60
        return scenario
    }

    static func report(seed: UInt64, seeds: Int) throws -> LocationReport {
        var evaluation = LocationEvaluation(scenario: try office(seed: seed))
        // Without a survey: the pooling is what is tested, and the survey is most of the cost.
        evaluation.surveySpacing = 0
        evaluation.seeds = seeds
        return evaluation.run()
    }

    @Test func pooledRunsAreTheSumOfTheSingleRuns() throws {
        let first = try Self.report(seed: 7, seeds: 1)
        let second = try Self.report(seed: 8, seeds: 1)
        let pooled = try Self.report(seed: 7, seeds: 2)
        #expect(first.seeds == [7] && second.seeds == [8] && pooled.seeds == [7, 8])
        #expect(pooled.calibration == first.calibration)
        #expect(!pooled.rooms.isEmpty && pooled.rooms.count == first.rooms.count)
        for room in pooled.rooms {
            let one = try #require(first.rooms.first { $0.direction == room.direction && $0.decider == room.decider })
            let other = try #require(second.rooms.first { $0.direction == room.direction && $0.decider == room.decider })
            #expect(room.seconds == one.seconds + other.seconds, "\(room.decider)")
            #expect(room.trueChanges == one.trueChanges + other.trueChanges, "\(room.decider)")
            #expect(room.decidedChanges == one.decidedChanges + other.decidedChanges, "\(room.decider)")
            #expect(room.missed == one.missed + other.missed, "\(room.decider)")
            let agreeing = room.accuracy * Double(room.seconds), sum = one.accuracy * Double(one.seconds) + other.accuracy * Double(other.seconds)
            #expect(abs(agreeing - sum) < 1e-6, "\(room.decider)")
            if let pooledMax = room.latencyMax {
                #expect(pooledMax == [one.latencyMax, other.latencyMax].compactMap { $0 }.max(), "\(room.decider)")
            }
        }
        for position in pooled.positions {
            let one = try #require(first.positions.first { $0.direction == position.direction && $0.method == position.method })
            let other = try #require(second.positions.first { $0.direction == position.direction && $0.method == position.method })
            #expect(position.fixes == one.fixes + other.fixes)
            #expect(position.max == max(one.max, other.max))
        }
        #expect(pooled.text.contains("Pooled over 2 runs, seeds 7, 8"))
        #expect(!first.text.contains("Pooled"))
    }

    @Test func seedsAreBounded() throws {
        var evaluation = LocationEvaluation(scenario: try Self.office(seed: 7))
        evaluation.seeds = 0
        #expect(evaluation.seeds == 1)
        evaluation.seeds = 1_000_000
        #expect(evaluation.seeds == LocationEvaluation.maximumSeeds)
    }

    @Test func aReportWithoutSeedsStillDecodes() throws {
        let report = try Self.report(seed: 7, seeds: 1)
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        object["seeds"] = nil
        let decoded = try JSONDecoder().decode(LocationReport.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded.seeds.isEmpty && decoded.rooms == report.rooms)
    }
}
