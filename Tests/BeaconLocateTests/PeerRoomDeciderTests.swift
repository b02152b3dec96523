@testable import BeaconLocate
import Testing

/// The rules of ESPresense (+ Home Assistant's mqtt_room), Bermuda and room-assistant, as the
/// evaluation runs them (docs/locate.md, "The systems people run today"): each on packets from
/// two room receivers, A and B, showing the behaviour its documentation describes.
@Suite struct PeerRoomDeciderTests {
    static let rooms = ["node A": "A", "node B": "B", "node C": "C"]

    /// Packets every `step` s from `start` to before `end`, each receiver at its level (nil: silent).
    static func feed<Decider: PacketRoomDecider>(_ decider: inout Decider, from start: Double, to end: Double, step: Double = 0.2,
                                                 levels: [String: Double]) -> [RoomEvent] {
        var events: [RoomEvent] = []
        var time = start
        while time < end - 1e-9 {
            for receiver in levels.keys.sorted() {
                events += decider.observe(subject: "tag", receiver: receiver, rssi: levels[receiver]!, measuredPower: -59, at: time)
            }
            time += step
        }
        return events + decider.advance(to: end)
    }

    @Test func bermudaSwitchesOnHistoryOrAThirtyPercentLeadButNotOnAOneDecibelOne() {
        var bermuda = BermudaRoomDecider(receiverRooms: Self.rooms)
        _ = Self.feed(&bermuda, from: 0, to: 10, levels: ["node A": -60])
        #expect(bermuda.room(of: "tag") == "A")
        // 1 dB nearer: 8 % in distance, under both the historical (15 %) and outright (30 %) bars.
        _ = Self.feed(&bermuda, from: 10, to: 40, levels: ["node A": -60, "node B": -59])
        #expect(bermuda.room(of: "tag") == "A")
        // C, new, 3 dB nearer than A: 23 %, not outright, so it wins on history, which takes
        // more than 3 cycles.
        let events = Self.feed(&bermuda, from: 40, to: 50, levels: ["node A": -60, "node B": -59, "node C": -57])
        let entered = events.first { $0.kind == .enter }
        #expect(bermuda.room(of: "tag") == "C" && entered?.room == "C")
        #expect(entered.map { $0.time > 40 + 3 * 1.05 && $0.time <= 46 } == true, "\(events)")
    }

    @Test func bermudaComesCloserAtOnceAndForgetsASilentProxyAfterThirtySeconds() {
        var bermuda = BermudaRoomDecider(receiverRooms: Self.rooms)
        _ = Self.feed(&bermuda, from: 0, to: 10, levels: ["node A": -60, "node B": -80])
        // B comes 25 dB closer at once (distance 10× shorter): an outright win within two cycles.
        let events = Self.feed(&bermuda, from: 10, to: 13, levels: ["node A": -80, "node B": -55])
        let entered = events.first { $0.kind == .enter && $0.room == "B" }
        #expect(entered.map { $0.time <= 10 + 2 * 1.05 } == true, "\(events)")
        // Everything silent: no area once B's distance times out (30 s after its last packet).
        #expect(bermuda.advance(to: 40).isEmpty)
        let exit = bermuda.advance(to: 45)
        #expect(exit.map(\.kind) == [.exit] && bermuda.room(of: "tag") == nil)
    }

    @Test func roomAssistantKeepsTheNearestInstanceForItsTimeout() {
        var assistant = RoomAssistantRoomDecider(receiverRooms: Self.rooms)
        _ = Self.feed(&assistant, from: 0, to: 10, levels: ["node A": -60, "node B": -75])
        #expect(assistant.room(of: "tag") == "A")
        // The tag leaves A's range: A's last distance stays the nearest until it is 60 s old.
        _ = Self.feed(&assistant, from: 10, to: 69, levels: ["node B": -75])
        #expect(assistant.room(of: "tag") == "A")
        _ = Self.feed(&assistant, from: 69, to: 71, levels: ["node B": -75])
        #expect(assistant.room(of: "tag") == "B")
        // Silent everywhere: "not home" at the first periodic check after the timeout.
        let events = assistant.advance(to: 200)
        #expect(events.map(\.kind) == [.exit] && assistant.room(of: "tag") == nil)
    }

    @Test func roomAssistantDistanceIsItsRatioFormula() {
        #expect(RoomAssistantRoomDecider.distance(rssi: -59, measuredPower: -59) == 1.0)
        #expect(RoomAssistantRoomDecider.distance(rssi: -50, measuredPower: -59) == 0.2)
        #expect(RoomAssistantRoomDecider.distance(rssi: -75, measuredPower: -59) == 5.8)
    }

    @Test func espresenseReportsInFiveSecondSlotsAndMqttRoomWaitsFiveSecondsForAFartherRoom() {
        var espresense = ESPresenseRoomDecider(receiverRooms: Self.rooms)
        let first = Self.feed(&espresense, from: 0, to: 9.9, levels: ["node A": -60, "node B": -70])
        #expect(first.map(\.room) == ["A"] && first.first?.time == 0)
        // A falls silent after 9.8 s; its pending report still goes out at the 10 s slot, so
        // B (farther) is taken only once A's last report is 5 s old, at the 15 s slot.
        let events = Self.feed(&espresense, from: 9.9, to: 20, levels: ["node B": -70])
        let entered = events.first { $0.kind == .enter }
        #expect(entered?.room == "B" && entered?.time == 15, "\(events)")
        // Never "away" with mqtt_room's default away_timeout (0).
        #expect(espresense.advance(to: 1000).isEmpty && espresense.room(of: "tag") == "B")
    }

    @Test func everyPeerIgnoresReceiversWithoutARoom() {
        var deciders: [any PacketRoomDecider] = [ESPresenseRoomDecider(receiverRooms: Self.rooms), BermudaRoomDecider(receiverRooms: Self.rooms),
                                                 RoomAssistantRoomDecider(receiverRooms: Self.rooms)]
        for index in deciders.indices {
            var events: [RoomEvent] = []
            for step in 0..<50 {
                events += deciders[index].observe(subject: "tag", receiver: "node nowhere", rssi: -40, measuredPower: -59, at: Double(step) * 0.2)
            }
            events += deciders[index].advance(to: 20)
            #expect(events.isEmpty && deciders[index].room(of: "tag") == nil)
        }
    }
}

extension PeerRoomDeciderTests {
    /// Times come from outside: a jump of ten years after the last packet finishes at once
    /// (each decider skips the cycles that can change nothing), and a non-finite time is ignored.
    @Test func aJumpInTimeIsBoundedAndNonFiniteTimesAreIgnored() {
        var deciders: [any PacketRoomDecider] = [ESPresenseRoomDecider(receiverRooms: Self.rooms), BermudaRoomDecider(receiverRooms: Self.rooms),
                                                 RoomAssistantRoomDecider(receiverRooms: Self.rooms)]
        for index in deciders.indices {
            for step in 0..<20 {
                _ = deciders[index].observe(subject: "tag", receiver: "node A", rssi: -60, measuredPower: -59, at: Double(step) * 0.2)
            }
            #expect(deciders[index].room(of: "tag") == "A")
            #expect(deciders[index].observe(subject: "other", receiver: "node A", rssi: -60, measuredPower: -59, at: .nan).isEmpty)
            #expect(deciders[index].room(of: "other") == nil)
            _ = deciders[index].advance(to: 3.2e8)
            // ESPresense's mqtt_room never reports away; the others have let the tag go.
            #expect(deciders[index].room(of: "tag") == (index == 0 ? "A" : nil))
            let back = deciders[index].observe(subject: "tag", receiver: "node B", rssi: -60, measuredPower: -59, at: 3.2e8 + 1)
                + deciders[index].advance(to: 3.2e8 + 3)
            #expect(deciders[index].room(of: "tag") == "B", "\(back)")
        }
    }
}
