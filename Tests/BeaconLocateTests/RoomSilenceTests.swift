import BeaconLocate
import Foundation
import Testing

/// Rooms held through silences (``RoomPresence/silenceBound(of:)``) and changed without passing
/// through "no room".
@Suite struct RoomSilenceTests {
    let rooms = ["pi-west": "west", "pi-east": "east"]

    @Test func aBurstyTagKeepsItsRoomThroughItsPauses() throws {
        var presence = RoomPresence(receiverRooms: rooms)
        var events: [RoomEvent] = []
        // Five packets in a second, then 19 s of silence, for ten minutes: a tag in a pocket.
        for burst in 0..<30 {
            let start = Double(burst) * 20
            for packet in 0..<5 { events += presence.observe(subject: "tag", receiver: "pi-west", rssi: -70, at: start + Double(packet) * 0.2) }
            for second in 1...19 { events += presence.advance(to: start + Double(second)) }
        }
        // Its first pause comes after four gaps of 0.2 s (five packets a second, as far as it
        // knows): it leaves at the floor. From the second burst on it knows its rate.
        #expect(events.first == RoomEvent(subject: "tag", room: "west", kind: .enter, time: 0))
        #expect(events.filter { $0.time >= 20 } == [RoomEvent(subject: "tag", room: "west", kind: .enter, time: 20)], "\(events)")
        let bound = presence.silenceBound(of: "tag") ?? 0
        #expect(bound > 19 && bound <= presence.configuration.silenceCeiling, "\(bound)")
        // Gone for good: the exit comes once the silence passes the bound, not before.
        var exit: RoomEvent?
        for second in 600...800 {
            if let event = presence.advance(to: Double(second)).first { exit = event; break }
        }
        let left = try #require(exit)
        #expect(left.kind == .exit && left.room == "west")
        #expect(left.time - 580.8 >= bound && left.time - 580.8 <= bound + 1, "\(left.time - 580.8) s against \(bound) s")
    }

    @Test func aMoveAfterASilenceIsOneChangeNotAPassThroughNoRoom() throws {
        var presence = RoomPresence(receiverRooms: rooms)
        var events: [RoomEvent] = []
        // One packet a second: the west link stops counting after 8 s of silence, the room is
        // held for ln(3600/0.01) ≈ 12.8 s.
        for second in 0..<60 { events += presence.observe(subject: "tag", receiver: "pi-west", rssi: -65, at: Double(second)) }
        let bound = try #require(presence.silenceBound(of: "tag"))
        #expect(abs(bound - log(3600 / 0.01)) < 0.5, "\(bound)")
        for second in 60...69 { events += presence.advance(to: Double(second)) }
        events += presence.observe(subject: "tag", receiver: "pi-east", rssi: -80, at: 69.5)
        #expect(events == [RoomEvent(subject: "tag", room: "west", kind: .enter, time: 0),
                           RoomEvent(subject: "tag", room: "west", kind: .exit, time: 69.5),
                           RoomEvent(subject: "tag", room: "east", kind: .enter, time: 69.5)], "\(events)")
    }

    /// The Raspberry Pi two-scanner run: rooms as announced, every exit after a silence at least
    /// the subject's bound, every change between rooms an exit and an enter at the same time.
    @Test func raspberryPiRunHoldsItsRoomsThroughSilences() throws {
        struct Event: Decodable { var scannerID: String; var minor: Int; var rssi: Int; var time: Double }
        let text = String(decoding: try FixtureFiles.gunzipped("raspi/TwoScannersRun1-2015-03-03.json.gz"), as: UTF8.self)
        let packets = try JSONDecoder().decode([Event].self, from: Data(("[" + text.replacingOccurrences(of: "}{", with: "},{") + "]").utf8))
            .sorted { $0.time < $1.time }
        var presence = RoomPresence(receiverRooms: ["Room201": "Room201", "Room202": "Room202"])
        let truth = ["2": "Room201", "3": "Room201", "4": "Room202"]
        var correct: [String: Int] = [:], cycles = 0
        var lastHeard: [String: Double] = [:]
        var events: [(event: RoomEvent, silence: Double, bound: Double)] = []
        func record(_ new: [RoomEvent], bounds: [String: Double]) {
            for event in new {
                events.append((event, event.time - (lastHeard[event.subject] ?? event.time), bounds[event.subject] ?? 0))
            }
        }
        let subjects = ["1", "2", "3", "4"]
        let start = packets[0].time / 1000
        var nextCycle = start + 1
        for packet in packets {
            let time = packet.time / 1000
            while time >= nextCycle {
                let bounds = Dictionary(uniqueKeysWithValues: subjects.compactMap { name in presence.silenceBound(of: name).map { (name, $0) } })
                record(presence.advance(to: nextCycle), bounds: bounds)
                cycles += 1
                for (subject, room) in truth where presence.room(of: subject) == room { correct[subject, default: 0] += 1 }
                nextCycle += 1
            }
            let subject = String(packet.minor)
            let bounds = Dictionary(uniqueKeysWithValues: subjects.compactMap { name in presence.silenceBound(of: name).map { (name, $0) } })
            let new = presence.observe(subject: subject, receiver: packet.scannerID, rssi: Double(packet.rssi), at: time)
            // A packet's own events come at its time, after a silence that ended with it.
            for event in new { events.append((event, 0, bounds[event.subject] ?? 0)) }
            lastHeard[subject] = time
        }
        for subject in truth.keys.sorted() {
            let share = Double(correct[subject] ?? 0) / Double(cycles)
            print("raspi, rooms as announced: beacon \(subject) in its room \(correct[subject] ?? 0) of \(cycles) cycles (\(String(format: "%.1f", share * 100)) %)")
            #expect(share >= 0.99, "beacon \(subject): \(share)")
        }
        for (index, entry) in events.enumerated() where entry.event.kind == .exit {
            let paired = events.indices.contains(index + 1) && events[index + 1].event.kind == .enter
                && events[index + 1].event.subject == entry.event.subject && events[index + 1].event.time == entry.event.time
            if paired { continue }
            // An exit into "no room": only after a silence past the subject's bound.
            #expect(entry.silence >= entry.bound && entry.bound >= presence.configuration.absence.lowerBound,
                    "beacon \(entry.event.subject) left \(entry.event.room) after \(entry.silence) s of silence, bound \(entry.bound) s")
        }
        let moving = events.filter { $0.event.subject == "1" }
        #expect(moving.contains { $0.event.room == "Room202" && $0.event.kind == .enter })
        for entry in moving {
            print(String(format: "raspi: beacon 1 %@ %@ at +%.0f s (silence %.1f s, bound %.1f s)", entry.event.kind.rawValue, entry.event.room,
                         entry.event.time - start, entry.silence, entry.bound))
        }
    }
}
