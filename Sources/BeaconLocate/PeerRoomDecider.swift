import Foundation

/// A room decider driven packet by packet, as the room-presence systems people run today are
/// (issue 10 names ESPresense, Bermuda and room-assistant): one receiver per room hears a
/// subject's packets, and the decider names the room of the receiver it judges nearest.
///
/// The implementations in this module (``ESPresenseRoomDecider``, ``BermudaRoomDecider``,
/// ``RoomAssistantRoomDecider``) follow each project's published rule with the defaults it ships,
/// so that the evaluation can run them beside Proxima's own deciders on the same sightings. They
/// were written from the projects' documentation and observed behaviour (docs/locate.md, "The
/// systems people run today"); no code was copied.
public protocol PacketRoomDecider: Sendable {
    /// One packet of `subject` (a beacon advertising `measuredPower` dBm at 1 m) heard by
    /// `receiver` at `rssi`. Receivers with no room are ignored.
    mutating func observe(subject: String, receiver: String, rssi: Double, measuredPower: Double, at time: Double) -> [RoomEvent]
    /// Moves the clock to `time`: what the decider does on its own timers (reports, update
    /// cycles, timeouts) up to then.
    mutating func advance(to time: Double) -> [RoomEvent]
    func room(of subject: String) -> String?
}

extension RoomEvent {
    /// The events of `subject` moving from `old` to `new` (either may be nil: no room).
    static func change(subject: String, from old: String?, to new: String?, at time: Double) -> [RoomEvent] {
        guard old != new else { return [] }
        var events: [RoomEvent] = []
        if let old { events.append(RoomEvent(subject: subject, room: old, kind: .exit, time: time)) }
        if let new { events.append(RoomEvent(subject: subject, room: new, kind: .enter, time: time)) }
        return events
    }
}

/// The usual conversion of a level to a distance: `10^((reference − rssi) / (10·n))`.
func logDistance(rssi: Double, reference: Double, exponent: Double) -> Double {
    pow(10, (reference - rssi) / (10 * exponent))
}
