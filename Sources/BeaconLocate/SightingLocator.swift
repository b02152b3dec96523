import BeaconKit
import Foundation

/// What locating a stream of sightings produces.
public enum LocateOutput: Sendable, Hashable {
    /// A receiver's position for one cycle, and the room it falls in.
    case fix(time: Double, receiver: String, fix: Fix, room: String?)
    case room(RoomEvent)
}

/// Turns a sighting stream, from any number of receivers, into positions and room events,
/// driven only by the sightings' own times (call `advance(to:)` for a live clock).
///
/// Per cycle (one second by default) each receiver's sightings of the map's beacons are
/// averaged per beacon and located: a phone locating itself. Every iBeacon sighting also feeds
/// room presence through the map's room-assigned receivers: a carried beacon's room. A map with
/// rooms but no room receivers gives each located receiver the room of its fixes instead
/// (``FixRoomPresence``).
public struct SightingLocator: Sendable {
    public let cycle: Double
    private var locator: ScanLocator
    private var presence: RoomPresence
    private var fixRooms: FixRoomPresence?
    private var cycleStart: Double?
    /// receiver → beacon index → (sum, count) for the open cycle.
    private var pending: [String: [Int: (sum: Double, count: Int)]] = [:]
    public static let maximumReceiversPerCycle = 10_000

    public init(locator: ScanLocator, presence: RoomPresence, cycle: Double = 1) {
        self.locator = locator
        self.presence = presence
        self.cycle = cycle
        if presence.receiverRooms.isEmpty && !locator.map.rooms.isEmpty { fixRooms = FixRoomPresence(rooms: locator.map.rooms) }
    }

    public mutating func receive(_ sighting: Sighting) -> [LocateOutput] {
        var outputs = advance(to: sighting.time)
        guard let rssi = sighting.rssi, let identity = sighting.frame.iBeacon?.identity else { return outputs }
        let beacon = locator.map.beaconIndex(for: sighting.frame)
        if let beacon, pending[sighting.receiver] != nil || pending.count < Self.maximumReceiversPerCycle {
            let previous = pending[sighting.receiver, default: [:]][beacon] ?? (0, 0)
            pending[sighting.receiver, default: [:]][beacon] = (previous.sum + Double(rssi), previous.count + 1)
        }
        let subject = beacon.map { locator.map.beacons[$0].id } ?? identity.description
        outputs += presence.observe(subject: subject, receiver: sighting.receiver, rssi: Double(rssi), at: sighting.time).map(LocateOutput.room)
        return outputs
    }

    /// Closes every cycle that ended by `time`.
    public mutating func advance(to time: Double) -> [LocateOutput] {
        guard let start = cycleStart else {
            cycleStart = time
            return []
        }
        guard time >= start + cycle else { return [] }
        var outputs = closeCycle(at: start + cycle)
        // Skip empty cycles in one step after a long silence.
        let cycles = ((time - start) / cycle).rounded(.down)
        cycleStart = start + cycles * cycle
        outputs += presence.advance(to: time).map(LocateOutput.room)
        if fixRooms != nil { outputs += fixRooms!.advance(to: time).map(LocateOutput.room) }
        return outputs
    }

    /// Closes the open cycle at the end of the stream.
    public mutating func finish() -> [LocateOutput] {
        guard let start = cycleStart else { return [] }
        return closeCycle(at: start + cycle)
    }

    private mutating func closeCycle(at end: Double) -> [LocateOutput] {
        var outputs: [LocateOutput] = []
        for receiver in pending.keys.sorted() {
            let readings = pending[receiver]!.sorted { $0.key < $1.key }.map { Reading(beacon: $0.key, rssi: $0.value.sum / Double($0.value.count)) }
            if let fix = locator.locate(readings, receiver: receiver, at: end) {
                outputs.append(.fix(time: end, receiver: receiver, fix: fix, room: locator.map.room(at: fix.position)?.name))
                if fixRooms != nil { outputs += fixRooms!.observe(subject: receiver, at: fix.position, time: end).map(LocateOutput.room) }
            }
        }
        pending = [:]
        return outputs
    }
}
