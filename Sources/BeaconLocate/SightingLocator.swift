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
/// averaged per beacon and located: a phone locating itself. A beacon that is not one of the
/// map's is a carried beacon (a tag): when two or more of the map's receivers have positions,
/// the gateways that heard it in the cycle locate it, as anchors heard at the tag's advertised
/// power plus each gateway's calibrated gain. On a map with rooms, the room of every located
/// subject (the `room` of its fixes, and its enter/exit events) is the default room decider's
/// (``RoomDecider``, with its defaults for phones and for tags; a tag's room decider is fed every
/// `tagRoomCycle`, half a second by default, which follows a room change sooner than once a
/// second). Room-assigned receivers without a position feed ``RoomPresence`` (one
/// scanner per room, the Raspberry Pi layout); on a map without positioned gateways every
/// room-assigned receiver does.
public struct SightingLocator: Sendable {
    public let cycle: Double
    /// Seconds per room decision of a carried beacon (its printed fixes stay per `cycle`).
    public let tagRoomCycle: Double
    private var locator: ScanLocator
    private var presence: RoomPresence
    private var rooms: RoomDecider?
    /// Carried beacons from the gateways: the gateways as anchors, each at the model's default
    /// power plus its gain; a tag's readings are shifted by its advertised power's difference.
    private var tagLocator: ScanLocator?
    private var tagRooms: RoomDecider?
    private let gatewayIndex: [String: Int]
    private let defaultPower: Double
    private var cycleStart: Double?
    private var tagRoomCycleStart: Double?
    /// receiver → beacon index → (sum, count) for the open cycle.
    private var pending: [String: [Int: (sum: Double, count: Int)]] = [:]
    /// tag → gateway index → (sum, count) for the open cycle, RSSI already shifted to the
    /// default power.
    private var tagPending: [String: [Int: (sum: Double, count: Int)]] = [:]
    /// The same for the open room cycle of the tags.
    private var tagRoomPending: [String: [Int: (sum: Double, count: Int)]] = [:]
    public static let maximumReceiversPerCycle = 10_000

    /// `survey` gives the room decider's fingerprints (as the locator's); without `roomDecider`
    /// rooms come from `presence` only, and a fix's room is the one holding it.
    public init(locator: ScanLocator, presence: RoomPresence, cycle: Double = 1, tagRoomCycle: Double = 0.5, survey: [SurveyPoint] = [],
                roomDecider: Bool = true) {
        self.locator = locator
        self.presence = presence
        self.cycle = cycle
        self.tagRoomCycle = tagRoomCycle.isFinite && tagRoomCycle > 0 ? tagRoomCycle : cycle
        let map = locator.map
        let model = locator.anchors.model
        defaultPower = model.defaultPower
        let gateways = map.receivers.compactMap { receiver in receiver.position.map { (receiver.name, $0) } }
        gatewayIndex = gateways.count >= 2 ? Dictionary(gateways.enumerated().map { ($1.0, $0) }, uniquingKeysWith: { first, _ in first }) : [:]
        if roomDecider, !map.rooms.isEmpty {
            rooms = RoomDecider(map: map, model: model, survey: survey, configuration: .phones)
        }
        guard !gatewayIndex.isEmpty else { return }
        let anchors = gateways.map { MappedBeacon(id: $0.0, position: $0.1, measuredPower: model.defaultPower + model.gain(of: $0.0)) }
        let reverse = SiteMap(name: map.name, width: map.width, height: map.height, walls: map.walls, rooms: map.rooms, doors: map.doors, beacons: anchors)
        let reverseModel = PathLossModel(exponent: model.exponent, defaultPower: model.defaultPower, heightOffset: model.heightOffset)
        // Each gateway's gain stays in a tag's readings here (the anchors' powers carry it), so
        // it stays in the survey's too.
        let fingerprints = map.tagFingerprints(anchors: gatewayIndex, referencePower: model.defaultPower)
        tagLocator = ScanLocator(method: locator.method == .fingerprint && fingerprints.isEmpty ? .particle : locator.method, map: reverse,
                                 model: reverseModel, survey: fingerprints, attenuatingWalls: true)
        if roomDecider, !map.rooms.isEmpty {
            tagRooms = RoomDecider(map: reverse, model: reverseModel, survey: fingerprints, configuration: .tags)
        }
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
        let gateway = gatewayIndex[sighting.receiver]
        if beacon == nil, let gateway, tagPending[subject] != nil || tagPending.count < Self.maximumReceiversPerCycle,
           let power = sighting.frame.iBeacon?.measuredPower.dBm {
            let shifted = Double(rssi) - (Double(power) - defaultPower)
            let previous = tagPending[subject, default: [:]][gateway] ?? (0, 0)
            tagPending[subject, default: [:]][gateway] = (previous.sum + shifted, previous.count + 1)
            if tagRooms != nil {
                let previousForRooms = tagRoomPending[subject, default: [:]][gateway] ?? (0, 0)
                tagRoomPending[subject, default: [:]][gateway] = (previousForRooms.sum + shifted, previousForRooms.count + 1)
            }
        }
        // Positioned gateways locate tags; only room scanners without a position vote by room.
        if gateway == nil || tagRooms == nil {
            outputs += presence.observe(subject: subject, receiver: sighting.receiver, rssi: Double(rssi), at: sighting.time).map(LocateOutput.room)
        }
        return outputs
    }

    /// Closes every cycle that ended by `time`: fix cycles and the tags' room cycles in time
    /// order (a room cycle first when both end together, so the fix names the room just decided).
    public mutating func advance(to time: Double) -> [LocateOutput] {
        guard var start = cycleStart else {
            cycleStart = time
            tagRoomCycleStart = time
            return []
        }
        var roomStart = tagRoomCycleStart ?? start
        var outputs: [LocateOutput] = []
        var closed = false
        while true {
            let fixEnd = start + cycle, roomEnd = tagRooms == nil ? Double.infinity : roomStart + tagRoomCycle
            guard time >= min(fixEnd, roomEnd) else { break }
            closed = true
            // After a close the pending readings are empty: later whole cycles up to `time` are
            // skipped in one step, so a long silence costs nothing.
            if roomEnd <= fixEnd {
                outputs += closeTagRoomCycle(at: roomEnd)
                roomStart += ((time - roomStart) / tagRoomCycle).rounded(.down) * tagRoomCycle
            } else {
                outputs += closeCycle(at: fixEnd)
                start += ((time - start) / cycle).rounded(.down) * cycle
            }
        }
        cycleStart = start
        tagRoomCycleStart = roomStart
        guard closed else { return [] }
        outputs += presence.advance(to: time).map(LocateOutput.room)
        if rooms != nil { outputs += rooms!.advance(to: time).map(LocateOutput.room) }
        if tagRooms != nil { outputs += tagRooms!.advance(to: time).map(LocateOutput.room) }
        return outputs
    }

    /// Closes the open cycles at the end of the stream.
    public mutating func finish() -> [LocateOutput] {
        guard let start = cycleStart else { return [] }
        let fixEnd = start + cycle
        guard tagRooms != nil, let roomStart = tagRoomCycleStart else { return closeCycle(at: fixEnd) }
        let roomEnd = roomStart + tagRoomCycle
        return roomEnd <= fixEnd ? closeTagRoomCycle(at: roomEnd) + closeCycle(at: fixEnd) : closeCycle(at: fixEnd) + closeTagRoomCycle(at: roomEnd)
    }

    /// Feeds every tag heard in the room cycle to its room decider.
    private mutating func closeTagRoomCycle(at end: Double) -> [LocateOutput] {
        guard tagRooms != nil else { return [] }
        var outputs: [LocateOutput] = []
        for tag in tagRoomPending.keys.sorted() {
            let readings = tagRoomPending[tag]!.sorted { $0.key < $1.key }.map { Reading(beacon: $0.key, rssi: $0.value.sum / Double($0.value.count)) }
            outputs += tagRooms!.observe(subject: tag, readings: readings, receiver: tag, time: end).map(LocateOutput.room)
        }
        tagRoomPending = [:]
        return outputs
    }

    private mutating func closeCycle(at end: Double) -> [LocateOutput] {
        var outputs: [LocateOutput] = []
        for receiver in pending.keys.sorted() {
            let readings = pending[receiver]!.sorted { $0.key < $1.key }.map { Reading(beacon: $0.key, rssi: $0.value.sum / Double($0.value.count)) }
            guard let fix = locator.locate(readings, receiver: receiver, at: end) else { continue }
            var room = locator.map.room(at: fix.position)?.name
            if rooms != nil {
                let events = rooms!.observe(subject: receiver, readings: readings, receiver: receiver, time: end)
                room = rooms!.room(of: receiver)
                outputs.append(.fix(time: end, receiver: receiver, fix: fix, room: room))
                outputs += events.map(LocateOutput.room)
            } else {
                outputs.append(.fix(time: end, receiver: receiver, fix: fix, room: room))
            }
        }
        for tag in tagPending.keys.sorted() {
            guard tagLocator != nil else { break }
            let readings = tagPending[tag]!.sorted { $0.key < $1.key }.map { Reading(beacon: $0.key, rssi: $0.value.sum / Double($0.value.count)) }
            guard let fix = tagLocator!.locate(readings, receiver: tag, at: end) else { continue }
            let room = tagRooms.map { $0.room(of: tag) } ?? tagLocator!.map.room(at: fix.position)?.name
            outputs.append(.fix(time: end, receiver: tag, fix: fix, room: room))
        }
        pending = [:]
        tagPending = [:]
        return outputs
    }
}
