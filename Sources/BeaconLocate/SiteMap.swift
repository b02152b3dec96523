import BeaconKit
import Foundation

/// Everything positioning knows about a site: its extent, walls, rooms, doors, the beacons and
/// receivers placed on it, and named spots to route to. Load one with ``SiteMap/decode(_:)``.
public struct SiteMap: Sendable, Hashable {
    public var name: String
    public var width: Double
    public var height: Double
    public var walls: [MapWall]
    public var rooms: [Room]
    public var doors: [Door]
    public var beacons: [MappedBeacon]
    public var receivers: [MappedReceiver]
    public var pointsOfInterest: [PointOfInterest]
    /// Scans taken at known spots (a phone held still at each), readings by index in `beacons`:
    /// fingerprints, and calibration links at many distances.
    public var survey: [SurveyPoint]
    /// A tag held still at known spots, heard by the receivers: carried beacons' fingerprints.
    public var tagSurvey: [TagSurveyPoint]

    public init(name: String = "site", width: Double, height: Double, walls: [MapWall] = [], rooms: [Room] = [],
                doors: [Door] = [], beacons: [MappedBeacon] = [], receivers: [MappedReceiver] = [],
                pointsOfInterest: [PointOfInterest] = [], survey: [SurveyPoint] = [], tagSurvey: [TagSurveyPoint] = []) {
        self.name = name
        self.width = width
        self.height = height
        self.walls = walls
        self.rooms = rooms
        self.doors = doors
        self.beacons = beacons
        self.receivers = receivers
        self.pointsOfInterest = pointsOfInterest
        self.survey = survey
        self.tagSurvey = tagSurvey
    }

    /// The tag survey as fingerprints of carried beacons: each reading by the index `anchors`
    /// gives its receiver (receivers it does not name are left out), shifted from the survey
    /// tag's power to `referencePower` and less `offset` of its receiver (a fitted gain, where
    /// the caller's readings have it taken off), so that it reads as a tracked tag's readings do.
    public func tagFingerprints(anchors: [String: Int], referencePower: Double, offset: (String) -> Double = { _ in 0 }) -> [SurveyPoint] {
        tagSurvey.compactMap { point in
            let readings = point.readings.compactMap { reading -> Reading? in
                guard receivers.indices.contains(reading.beacon) else { return nil }
                let name = receivers[reading.beacon].name
                guard let anchor = anchors[name] else { return nil }
                return Reading(beacon: anchor, rssi: reading.rssi - offset(name) - (point.measuredPower - referencePower))
            }
            return readings.isEmpty ? nil : SurveyPoint(position: point.position, readings: readings.sorted { $0.beacon < $1.beacon })
        }
    }

    /// The first room whose outline holds the point (a point on a shared edge goes to the room
    /// listed first).
    public func room(at position: Position) -> Room? {
        rooms.first { $0.outline.contains(position) } ?? rooms.first { $0.outline.contains(position, tolerance: 0.01) }
    }

    public func room(named name: String) -> Room? { rooms.first { $0.name == name } }

    /// The room a receiver reports for: its assigned room, else the room at its position.
    public func room(ofReceiver name: String) -> String? {
        guard let receiver = receivers.first(where: { $0.name == name }) else { return nil }
        if let room = receiver.room { return room }
        return receiver.position.flatMap { room(at: $0)?.name }
    }

    /// The total attenuation of the walls a straight line crosses, in dB.
    public func wallLoss(from: Position, to: Position) -> Double {
        let line = Segment(from: from, to: to)
        var loss = 0.0
        for wall in walls where wall.segment.crosses(line) { loss += wall.attenuation }
        return loss
    }

    /// The index of the beacon with this id, or of the iBeacon with this identity.
    public func beaconIndex(for frame: BeaconFrame) -> Int? {
        guard let identity = frame.iBeacon?.identity else { return nil }
        return beacons.firstIndex { $0.identity == identity }
    }
}

public struct MapWall: Sendable, Hashable {
    public var segment: Segment
    /// Loss through the wall in dB.
    public var attenuation: Double

    public init(from: Position, to: Position, attenuation: Double = 5) {
        self.segment = Segment(from: from, to: to)
        self.attenuation = attenuation
    }
}

public struct Room: Sendable, Hashable {
    public var name: String
    public var outline: Polygon

    public init(name: String, outline: Polygon) {
        self.name = name
        self.outline = outline
    }
}

/// A walkable opening. Routes between rooms pass through doors; walls drawn across a door's
/// position should leave a gap there.
public struct Door: Sendable, Hashable {
    public var name: String
    public var position: Position

    public init(name: String, position: Position) {
        self.name = name
        self.position = position
    }
}

/// A beacon fixed at a known spot: an anchor for positioning and calibration.
public struct MappedBeacon: Sendable, Hashable {
    /// The name used in files (`b3001`, `lobby-1`).
    public var id: String
    /// The iBeacon identity it advertises, when sightings should be matched to it.
    public var identity: BeaconIdentity?
    public var position: Position
    /// RSSI at 1 m in dBm, as configured or advertised; calibration may replace it.
    public var measuredPower: Double?

    public init(id: String, identity: BeaconIdentity? = nil, position: Position, measuredPower: Double? = nil) {
        self.id = id
        self.identity = identity
        self.position = position
        self.measuredPower = measuredPower
    }
}

/// A scanner. A fixed gateway has a position; a room-presence scanner may have only a room.
public struct MappedReceiver: Sendable, Hashable {
    public var name: String
    public var position: Position?
    public var room: String?

    public init(name: String, position: Position? = nil, room: String? = nil) {
        self.name = name
        self.position = position
        self.room = room
    }
}

public struct PointOfInterest: Sendable, Hashable {
    public var name: String
    public var position: Position

    public init(name: String, position: Position) {
        self.name = name
        self.position = position
    }
}
