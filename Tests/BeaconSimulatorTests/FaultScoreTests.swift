import BeaconFleet
import BeaconKit
import BeaconSimulator
import Foundation
import Testing

/// The scoring rules of `FaultScore` on hand-made alert feeds: what counts as detected, how late,
/// and what is a false alarm.
@Suite struct FaultScoreTests {
    static let scenario = try! Scenario.decode(Data(faultScenario("""
        [{"kind": "batteryDeath", "beacon": "tag", "start": 0, "death": 345600},
         {"kind": "move", "beacon": "shelf", "at": 1000, "to": {"x": 30, "y": 10}},
         {"kind": "rogue", "at": 50, "position": {"x": 20, "y": 5}, "major": 1, "minor": 1999},
         {"kind": "receiverOffline", "receiver": "east", "from": 2000, "to": 3000}]
        """, duration: 400_000).utf8))
    static let tag = scenario.beacons[0].identity
    static let shelf = scenario.beacons[1].identity
    static let door = scenario.beacons[2].identity
    static let rogue = scenario.beacons[3].identity
    static let death = 345_600.0

    typealias Change = FaultScore.AlertChange

    /// Days-left samples from four days before the death, `bias` times the truth.
    static func samples(bias: Double, threshold: Double = 20) -> [FaultScore.Sample] {
        stride(from: death - 4 * 86_400, to: death, by: 3600).map { time in
            FaultScore.Sample(time: time, identity: tag, state: .warning, daysLeft: bias * (death - time) / 86_400, missingAfter: threshold)
        }
    }

    static let goodChanges = [
        Change(identity: rogue, check: .unregistered, from: .ok, to: .warning, time: 52),
        Change(identity: shelf, check: .drift, from: .ok, to: .alert, time: 1300),
        Change(identity: tag, check: .battery, from: .ok, to: .warning, time: 100_000),
        Change(identity: tag, check: .battery, from: .warning, to: .alert, time: 200_000),
        Change(identity: tag, check: .missing, from: .ok, to: .alert, time: death + 30),
    ]

    @Test func everyFaultFoundByItsCheck() {
        let score = FaultScore(scenario: Self.scenario, changes: Self.goodChanges, samples: Self.samples(bias: 1.1))
        #expect(score.rows.map(\.detected) == [true, true, true, true])
        #expect(score.rows.map(\.detectedBy) == [.battery, .drift, .unregistered, nil])
        #expect(score.rows[0].latency == 30)
        #expect(score.rows[0].latencyRatio == 0.75)
        #expect(score.rows[1].latency == 300)
        #expect(abs(score.worstDaysLeftError! - 0.1) < 1e-9)
        #expect(score.falseMissing.isEmpty && score.unexplained.isEmpty)
        #expect(score.deadLatencyP95 == 30)
        #expect(score.passes)
        #expect(score.markdown.contains("Overall: pass"))
    }

    @Test func lateDeadBeaconAndPoorEstimateFail() {
        var changes = Self.goodChanges
        changes[4].time = Self.death + 50
        let score = FaultScore(scenario: Self.scenario, changes: changes, samples: Self.samples(bias: 1.3))
        #expect(score.rows[0].latencyRatio == 1.25)
        #expect(abs(score.worstDaysLeftError! - 0.3) < 1e-9)
        #expect(!score.passes)
    }

    @Test func missingOnALiveBeaconIsFalseAndSpoilsTheOutage() {
        let changes = Self.goodChanges + [
            Change(identity: Self.door, check: .missing, from: .unknown, to: .alert, time: 2500),
            // Raised before the death: false too, even for the beacon that dies later.
            Change(identity: Self.tag, check: .missing, from: .ok, to: .alert, time: 1000),
            Change(identity: Self.door, check: .clone, from: .ok, to: .warning, time: 4000),
            // A clear is not a raise.
            Change(identity: Self.door, check: .missing, from: .alert, to: .ok, time: 2600),
        ]
        let score = FaultScore(scenario: Self.scenario, changes: changes, samples: Self.samples(bias: 1))
        #expect(score.falseMissing.map(\.subject) == ["tag", "door"])
        #expect(score.rows[3].detected == false)
        #expect(score.rows[3].note.hasPrefix("1 false missing during it"))
        #expect(score.unexplained.map(\.check) == [.clone])
        #expect(!score.passes)
    }

    @Test func nothingRaisedIsNothingDetected() {
        let score = FaultScore(scenario: Self.scenario, changes: [], samples: [])
        #expect(score.rows.map(\.detected) == [false, false, false, true])
        #expect(score.deadLatencyP95 == nil)
        #expect(!score.passes)
    }
}
