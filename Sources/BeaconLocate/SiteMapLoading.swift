import BeaconKit
import Foundation

/// Why a site map was refused (BeaconKit's JSON-path error, shared with scenarios).
public typealias SiteMapError = DocumentFieldError

extension SiteMap {
    /// Bounds that keep an untrusted map from exhausting memory or time: routing is quadratic in
    /// doors and every particle step checks every wall.
    public enum Limits {
        public static let bytes = 8 << 20
        public static let beacons = 10_000
        public static let receivers = 10_000
        public static let walls = 10_000
        public static let rooms = 5_000
        public static let verticesPerRoom = 1_000
        public static let doors = 2_000
        public static let pointsOfInterest = 10_000
        /// Survey scans, each with at most one reading per beacon: fingerprint search is linear
        /// in them.
        public static let surveyPoints = 20_000
    }

    /// The power a tag survey's scan is taken to have advertised when it does not say: the
    /// iBeacon default of −59 dBm at 1 m.
    public static let defaultTagSurveyPower = -59.0

    public static func load(contentsOf url: URL) throws(SiteMapError) -> SiteMap {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: url) } catch {
            throw SiteMapError(path: "", expected: "a readable map file at \(url.path)", found: error.localizedDescription)
        }
        defer { try? handle.close() }
        // Read one byte past the limit, so a huge file is refused without reading it all.
        let data: Data
        do { data = try handle.read(upToCount: Limits.bytes + 1) ?? Data() } catch {
            throw SiteMapError(path: "", expected: "a readable map file at \(url.path)", found: error.localizedDescription)
        }
        return try decode(data)
    }

    /// Parses and checks a map document (schema in docs/locate.md). The `venue` object has the
    /// same form as a scenario's, so a scenario's venue can be pasted into a map.
    public static func decode(_ data: Data) throws(SiteMapError) -> SiteMap {
        guard data.count <= Limits.bytes else {
            throw SiteMapError(path: "", expected: "a map of at most \(Limits.bytes) bytes", found: "a larger document")
        }
        let document: MapDocument
        do { document = try JSONDecoder().decode(MapDocument.self, from: data) } catch let error as DecodingError {
            throw SiteMapError(decoding: error)
        } catch {
            throw SiteMapError(path: "", expected: "a JSON map", found: "\(error)")
        }
        return try document.validated()
    }
}

extension SiteMapError {
    init(decoding error: DecodingError) {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce("") { text, key in
                if let index = key.intValue { return "\(text)[\(index)]" }
                return text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)"
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            self.init(path: parent.isEmpty ? key.stringValue : "\(parent).\(key.stringValue)", expected: "a value", found: "nothing")
        case .typeMismatch(let type, let context):
            self.init(path: path(context.codingPath), expected: "a value of type \(type)", found: context.debugDescription)
        case .valueNotFound(let type, let context):
            self.init(path: path(context.codingPath), expected: "a value of type \(type)", found: "null")
        case .dataCorrupted(let context):
            self.init(path: path(context.codingPath), expected: "well-formed JSON", found: context.debugDescription)
        @unknown default:
            self.init(path: "", expected: "a JSON map", found: "\(error)")
        }
    }
}

/// The file form of a map, checked field by field by `validated()`.
private struct MapDocument: Decodable {
    struct Point: Decodable { var x: Double; var y: Double }
    struct Venue: Decodable { var width: Double; var height: Double; var walls: [WallEntry]? }
    struct WallEntry: Decodable { var from: Point; var to: Point; var attenuation: Double?; var name: String? }
    struct RoomEntry: Decodable { var name: String; var polygon: [Point] }
    struct DoorEntry: Decodable { var name: String?; var position: Point }
    struct BeaconEntry: Decodable {
        var name: String; var uuid: String?; var major: Int?; var minor: Int?; var position: Point; var measuredPower: Double?
    }
    struct ReceiverEntry: Decodable { var name: String; var position: Point?; var room: String? }
    struct PlaceEntry: Decodable { var name: String; var position: Point }
    /// One survey scan: where it was taken and the RSSI (dBm) of each beacon heard there, by
    /// the beacon's name.
    struct SurveyEntry: Decodable { var position: Point; var rssi: [String: Double] }
    /// One tag survey scan: where the tag was held, the power it advertised (the map's default
    /// reference when absent) and the RSSI (dBm) each receiver heard, by the receiver's name.
    struct TagSurveyEntry: Decodable { var position: Point; var measuredPower: Double?; var rssi: [String: Double] }

    var name: String?
    var uuid: String?
    var venue: Venue
    var rooms: [RoomEntry]?
    var doors: [DoorEntry]?
    var beacons: [BeaconEntry]?
    var receivers: [ReceiverEntry]?
    var pointsOfInterest: [PlaceEntry]?
    var survey: [SurveyEntry]?
    var tagSurvey: [TagSurveyEntry]?

    func validated() throws(SiteMapError) -> SiteMap {
        let width = try number(venue.width, "venue.width", in: 0.1...100_000)
        let height = try number(venue.height, "venue.height", in: 0.1...100_000)
        func position(_ point: Point, _ path: String) throws(SiteMapError) -> Position {
            Position(x: try number(point.x, "\(path).x", in: 0...width), y: try number(point.y, "\(path).y", in: 0...height))
        }
        let wallEntries = venue.walls ?? []
        try limit(wallEntries.count, SiteMap.Limits.walls, "venue.walls")
        var walls: [MapWall] = []
        for (index, wall) in wallEntries.enumerated() {
            let path = "venue.walls[\(index)]"
            walls.append(MapWall(from: try position(wall.from, "\(path).from"), to: try position(wall.to, "\(path).to"),
                                 attenuation: try number(wall.attenuation ?? 5, "\(path).attenuation", in: 0...200)))
        }
        let roomEntries = rooms ?? []
        try limit(roomEntries.count, SiteMap.Limits.rooms, "rooms")
        var mappedRooms: [Room] = []
        var roomNames: Set<String> = []
        for (index, room) in roomEntries.enumerated() {
            let path = "rooms[\(index)]"
            try name(room.name, "\(path).name", unique: &roomNames)
            guard room.polygon.count >= 3 else {
                throw SiteMapError(path: "\(path).polygon", expected: "at least 3 vertices", found: "\(room.polygon.count)")
            }
            try limit(room.polygon.count, SiteMap.Limits.verticesPerRoom, "\(path).polygon")
            var vertices: [Position] = []
            for (vertex, point) in room.polygon.enumerated() { vertices.append(try position(point, "\(path).polygon[\(vertex)]")) }
            mappedRooms.append(Room(name: room.name, outline: Polygon(vertices)))
        }
        let doorEntries = doors ?? []
        try limit(doorEntries.count, SiteMap.Limits.doors, "doors")
        var mappedDoors: [Door] = []
        for (index, door) in doorEntries.enumerated() {
            mappedDoors.append(Door(name: door.name ?? "door \(index + 1)", position: try position(door.position, "doors[\(index)].position")))
        }
        let defaultUUID = try uuid.map { text throws(SiteMapError) in try parseUUID(text, "uuid") }
        let beaconEntries = beacons ?? []
        try limit(beaconEntries.count, SiteMap.Limits.beacons, "beacons")
        var mappedBeacons: [MappedBeacon] = []
        var beaconNames: Set<String> = []
        for (index, beacon) in beaconEntries.enumerated() {
            let path = "beacons[\(index)]"
            try name(beacon.name, "\(path).name", unique: &beaconNames)
            var identity: BeaconIdentity?
            if let major = beacon.major {
                let uuid = try beacon.uuid.map { text throws(SiteMapError) in try parseUUID(text, "\(path).uuid") } ?? defaultUUID
                guard let uuid else {
                    throw SiteMapError(path: "\(path).uuid", expected: "a UUID (or a top-level \"uuid\") with major and minor", found: "nothing")
                }
                guard let minor = beacon.minor else {
                    throw SiteMapError(path: "\(path).minor", expected: "a minor together with the major", found: "nothing")
                }
                identity = BeaconIdentity(uuid: uuid, major: UInt16(try integer(major, "\(path).major")),
                                          minor: UInt16(try integer(minor, "\(path).minor")))
            } else if beacon.minor != nil {
                throw SiteMapError(path: "\(path).major", expected: "a major together with the minor", found: "nothing")
            }
            let power = try beacon.measuredPower.map { value throws(SiteMapError) in try number(value, "\(path).measuredPower", in: -127...20) }
            mappedBeacons.append(MappedBeacon(id: beacon.name, identity: identity, position: try position(beacon.position, "\(path).position"),
                                              measuredPower: power))
        }
        let receiverEntries = receivers ?? []
        try limit(receiverEntries.count, SiteMap.Limits.receivers, "receivers")
        var mappedReceivers: [MappedReceiver] = []
        var receiverNames: Set<String> = []
        for (index, receiver) in receiverEntries.enumerated() {
            let path = "receivers[\(index)]"
            try name(receiver.name, "\(path).name", unique: &receiverNames)
            if let room = receiver.room, !roomNames.contains(room) {
                throw SiteMapError(path: "\(path).room", expected: "the name of a room in \"rooms\"", found: "\"\(room)\"")
            }
            guard receiver.position != nil || receiver.room != nil else {
                throw SiteMapError(path: "\(path)", expected: "a \"position\" or a \"room\"", found: "neither")
            }
            mappedReceivers.append(MappedReceiver(name: receiver.name,
                                                  position: try receiver.position.map { point throws(SiteMapError) in try position(point, "\(path).position") },
                                                  room: receiver.room))
        }
        let placeEntries = pointsOfInterest ?? []
        try limit(placeEntries.count, SiteMap.Limits.pointsOfInterest, "pointsOfInterest")
        var places: [PointOfInterest] = []
        var placeNames: Set<String> = []
        for (index, place) in placeEntries.enumerated() {
            try name(place.name, "pointsOfInterest[\(index)].name", unique: &placeNames)
            places.append(PointOfInterest(name: place.name, position: try position(place.position, "pointsOfInterest[\(index)].position")))
        }
        let beaconIndex = Dictionary(uniqueKeysWithValues: mappedBeacons.enumerated().map { ($1.id, $0) })
        let surveyEntries = survey ?? []
        try limit(surveyEntries.count, SiteMap.Limits.surveyPoints, "survey")
        var scans: [SurveyPoint] = []
        for (index, entry) in surveyEntries.enumerated() {
            let path = "survey[\(index)]"
            var readings: [Reading] = []
            // Sorted, so that a refusal names the same beacon whatever the JSON object's order.
            for (beacon, rssi) in entry.rssi.sorted(by: { $0.key < $1.key }) {
                guard let anchor = beaconIndex[beacon] else {
                    throw SiteMapError(path: "\(path).rssi", expected: "the name of a beacon in \"beacons\"", found: "\"\(beacon.prefix(60))\"")
                }
                readings.append(Reading(beacon: anchor, rssi: try number(rssi, "\(path).rssi.\(beacon)", in: -127...20)))
            }
            guard !readings.isEmpty else {
                throw SiteMapError(path: "\(path).rssi", expected: "at least one beacon heard", found: "none")
            }
            scans.append(SurveyPoint(position: try position(entry.position, "\(path).position"), readings: readings.sorted { $0.beacon < $1.beacon }))
        }
        let tagScans = try validatedTagSurvey(receivers: mappedReceivers, position: position)
        return SiteMap(name: name ?? "site", width: width, height: height, walls: walls, rooms: mappedRooms, doors: mappedDoors,
                       beacons: mappedBeacons, receivers: mappedReceivers, pointsOfInterest: places, survey: scans, tagSurvey: tagScans)
    }

    /// Receivers named in a tag survey must be placed: a carried beacon is located from the
    /// receivers' positions, and one known only by its room has none.
    private func validatedTagSurvey(receivers: [MappedReceiver],
                                    position: (Point, String) throws(SiteMapError) -> Position) throws(SiteMapError) -> [TagSurveyPoint] {
        let entries = tagSurvey ?? []
        try limit(entries.count, SiteMap.Limits.surveyPoints, "tagSurvey")
        let receiverIndex = Dictionary(uniqueKeysWithValues: receivers.enumerated().map { ($1.name, $0) })
        var scans: [TagSurveyPoint] = []
        for (index, entry) in entries.enumerated() {
            let path = "tagSurvey[\(index)]"
            var readings: [Reading] = []
            for (receiver, rssi) in entry.rssi.sorted(by: { $0.key < $1.key }) {
                guard let anchor = receiverIndex[receiver], receivers[anchor].position != nil else {
                    throw SiteMapError(path: "\(path).rssi", expected: "the name of a receiver with a position in \"receivers\"",
                                       found: "\"\(receiver.prefix(60))\"")
                }
                readings.append(Reading(beacon: anchor, rssi: try number(rssi, "\(path).rssi.\(receiver)", in: -127...20)))
            }
            guard !readings.isEmpty else {
                throw SiteMapError(path: "\(path).rssi", expected: "at least one receiver heard", found: "none")
            }
            let power = try number(entry.measuredPower ?? SiteMap.defaultTagSurveyPower, "\(path).measuredPower", in: -127...20)
            scans.append(TagSurveyPoint(position: try position(entry.position, "\(path).position"), measuredPower: power,
                                        readings: readings.sorted { $0.beacon < $1.beacon }))
        }
        return scans
    }

    private func number(_ value: Double, _ path: String, in range: ClosedRange<Double>) throws(SiteMapError) -> Double {
        guard range.contains(value) else {
            throw SiteMapError(path: path, expected: "a number in \(range.lowerBound)...\(range.upperBound)", found: "\(value)")
        }
        return value
    }

    private func integer(_ value: Int, _ path: String) throws(SiteMapError) -> Int {
        guard (0...65535).contains(value) else { throw SiteMapError(path: path, expected: "an integer in 0...65535", found: "\(value)") }
        return value
    }

    private func limit(_ count: Int, _ maximum: Int, _ path: String) throws(SiteMapError) {
        guard count <= maximum else { throw SiteMapError(path: path, expected: "at most \(maximum) entries", found: "\(count)") }
    }

    private func name(_ text: String, _ path: String, unique taken: inout Set<String>) throws(SiteMapError) {
        guard !text.isEmpty, text.count <= 200, !text.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw SiteMapError(path: path, expected: "a name of 1 to 200 characters on one line", found: "\"\(text.prefix(40))\"")
        }
        guard taken.insert(text).inserted else { throw SiteMapError(path: path, expected: "a name used once", found: "\"\(text)\" again") }
    }

    private func parseUUID(_ text: String, _ path: String) throws(SiteMapError) -> UUID {
        guard let uuid = UUID(uuidString: text) else {
            throw SiteMapError(path: path, expected: "a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", found: "\"\(text.prefix(60))\"")
        }
        return uuid
    }
}
