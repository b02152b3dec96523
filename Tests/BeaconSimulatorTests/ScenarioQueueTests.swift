import BeaconKit
@testable import BeaconSimulator
import Foundation
import Testing

/// The `queue` key (ScenarioQueue.swift): customers generated from the seed, the truth of their
/// waits consistent with first come, first served on the given counters, and refusals naming
/// the JSON path.
@Suite struct ScenarioQueueTests {
    static func example() throws -> Data { try Data(contentsOf: examplesDirectory.appendingPathComponent("queue.json")) }

    @Test func theDMVExampleGeneratesTheSameCustomersEveryTime() throws {
        let first = try #require(try Scenario.decode(Self.example()).queue)
        let second = try #require(try Scenario.decode(Self.example()).queue)
        #expect(first.customers == second.customers)
        // About 24 an hour for eight hours, some giving up, every one a walker receiver.
        #expect((150...250).contains(first.customers.count))
        #expect(first.customers.contains { !$0.served } && first.customers.contains { $0.served })
        let scenario = try Scenario.decode(Self.example())
        for customer in first.customers {
            #expect(scenario.receivers.contains { $0.name == customer.receiver })
        }
    }

    @Test func theTruthIsAFirstComeFirstServedQueueOnTheCounters() throws {
        let venue = try #require(try Scenario.decode(Self.example()).queue)
        let served = venue.customers.filter(\.served)
        // No counter serves two customers at once: each reaches service after the previous one there left.
        for counter in venue.counters.indices {
            let here = served.filter { $0.counter == counter }.sorted { $0.reachedService! < $1.reachedService! }
            for (previous, next) in zip(here, here.dropFirst()) {
                #expect(next.reachedService! >= previous.reachedService! + previous.serviceSeconds!)
            }
        }
        // First come, first served: among the served, reaching service follows arrival order,
        // up to the seconds a walk from a farther seat takes.
        for (earlier, later) in zip(served, served.dropFirst()) {
            #expect(later.reachedService! + 30 >= earlier.reachedService!, "\(earlier.receiver) and \(later.receiver)")
        }
        #expect(venue.customers.allSatisfy { $0.arrival >= venue.from && $0.arrival < venue.to })
        // Those who gave up left after their patience, never having reached service.
        #expect(venue.customers.filter { !$0.served }.allSatisfy { $0.gaveUp! > $0.arrival && $0.counter == nil })
    }

    @Test(arguments: [
        (#""ratePerHour": 24,"#, #""ratePerHour": "many","#, "queue.ratePerHour: expected a number"),
        (#""entryBeacon": "waiting room","#, #""entryBeacon": "lobby","#, "queue.entryBeacon: expected the name of one of the scenario's beacons"),
        (#""serviceBeacon": "counter 1","#, #""serviceBeacon": "waiting room","#, "queue.serviceBeacon: expected a beacon whose identity differs"),
        (#""distribution": "lognormal""#, #""distribution": "gamma""#, "queue.service.distribution: expected \"exponential\" or \"lognormal\""),
        (#""to": 28800,"#, #""to": 0,"#, "queue.to: expected a time after \"from\""),
        (#""ratePerHour": 24,"#, #""ratePerHour": 24, "colour": 1,"#, "queue.colour: expected one of the keys"),
        (#""ratePerHour": 24,"#, #""ratePerHour": 5000,"#, "queue.ratePerHour: expected at most about 2500 customers"),
    ])
    func refusalsNameThePath(original: String, replacement: String, message: String) throws {
        let text = String(decoding: try Self.example(), as: UTF8.self)
        #expect(text.contains(original))
        let broken = Data(text.replacingOccurrences(of: original, with: replacement).utf8)
        #expect(throws: ScenarioError.self) { _ = try Scenario.decode(broken) }
        do {
            _ = try Scenario.decode(broken)
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
