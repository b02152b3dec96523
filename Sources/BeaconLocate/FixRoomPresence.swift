import BeaconKit
import Foundation

/// Decides which room each subject is in from its position fixes, for sites where no receiver
/// is assigned to rooms (a phone locating itself from beacons): the room is the map's room
/// holding the fix, with hysteresis like ``RoomPresence``'s, in space and in time.
///
/// A subject moves to another room only when its fixes have stood inside that room, at least
/// `margin` metres from the room's edges, for `dwell` seconds without a fix elsewhere; a fix in
/// no room (a wall, outside the outlines) changes nothing. With no fix for `absence` seconds
/// the subject exits.
public struct FixRoomPresence: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// How far inside a room (metres from its edges) a fix must be to count for it.
        public var margin: Double
        public var dwell: Double
        public var absence: Double

        public init(margin: Double = 0.3, dwell: Double = 1, absence: Double = 6) {
            self.margin = margin
            self.dwell = dwell
            self.absence = absence
        }
    }

    struct Subject: Hashable, Sendable {
        var room: String?
        var candidate: String?
        var candidateSince = 0.0
        var lastFix = 0.0
    }

    public let configuration: Configuration
    public let rooms: [Room]
    private var subjects: [String: Subject] = [:]
    public static let maximumSubjects = 100_000

    public init(rooms: [Room], configuration: Configuration = Configuration()) {
        self.rooms = rooms
        self.configuration = configuration
    }

    public func room(of subject: String) -> String? { subjects[subject]?.room }

    /// One fix of `subject` at `time`.
    public mutating func observe(subject name: String, at position: Position, time: Double) -> [RoomEvent] {
        if subjects[name] == nil && subjects.count >= Self.maximumSubjects { return [] }
        var subject = subjects[name] ?? Subject()
        defer { subjects[name] = subject }
        subject.lastFix = time
        guard let room = rooms.first(where: { $0.outline.contains(position) && depth(of: position, in: $0) >= configuration.margin })
            ?? (subject.room == nil ? rooms.first(where: { $0.outline.contains(position) }) : nil) else {
            // Not clearly in any room: neither confirms a candidate nor moves the subject.
            subject.candidate = nil
            return []
        }
        guard let current = subject.room else {
            subject.room = room.name
            subject.candidate = nil
            return [RoomEvent(subject: name, room: room.name, kind: .enter, time: time)]
        }
        guard room.name != current else {
            subject.candidate = nil
            return []
        }
        if subject.candidate != room.name {
            subject.candidate = room.name
            subject.candidateSince = time
        }
        guard time - subject.candidateSince >= configuration.dwell else { return [] }
        subject.room = room.name
        subject.candidate = nil
        return [RoomEvent(subject: name, room: current, kind: .exit, time: time),
                RoomEvent(subject: name, room: room.name, kind: .enter, time: time)]
    }

    /// Moves the clock: subjects without a fix for `absence` seconds leave their rooms.
    public mutating func advance(to time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        for name in subjects.keys.sorted() {
            guard let subject = subjects[name], time - subject.lastFix > configuration.absence else { continue }
            if let room = subject.room { events.append(RoomEvent(subject: name, room: room, kind: .exit, time: time)) }
            subjects[name] = nil
        }
        return events
    }

    private func depth(of position: Position, in room: Room) -> Double {
        room.outline.edges.map { $0.distance(to: position) }.min() ?? 0
    }
}
