import BeaconKit
import BeaconRotation
import Foundation

extension Scenario {
    /// Reads a scenario file. Every refusal is a `ScenarioError` naming the JSON path of the field.
    public static func load(contentsOf url: URL) throws(ScenarioError) -> Scenario {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ScenarioError(path: "", expected: "a readable scenario file at \(url.path)", found: "\(error.localizedDescription)")
        }
        var scenario = try decode(data)
        try scenario.applyAdvertisers(try JSONCursor.parse(data).child("advertisers"), directory: url.deletingLastPathComponent())
        return scenario
    }

    /// Parses and validates a scenario document (schema in docs/scenarios.md).
    public static func decode(_ data: Data) throws(ScenarioError) -> Scenario {
        let root = try JSONCursor.parse(data).object(allowing: [
            "name", "seed", "duration", "uuid", "venue", "channel", "beacons", "receivers", "regions", "description",
            "rooms", "doors", "faults", "queue", "advertisers", "attacks",
        ])
        let name = try root.string("name") ?? "scenario"
        let seed = UInt64(try root.child("seed")?.integer(in: 0...(1 << 53)) ?? 1)
        let duration = try root.number("duration", default: 600, in: durationRange)
        let defaultUUID = try root.child("uuid").map { cursor throws(ScenarioError) in try parseUUID(cursor) }

        let venueCursor = try root.required("venue").object(allowing: ["width", "height", "walls"])
        let width = try venueCursor.required("width").number(in: 0.1...100_000)
        let height = try venueCursor.required("height").number(in: 0.1...100_000)
        let bounds = (width: width, height: height)
        var walls: [Wall] = []
        let wallCursors = try venueCursor.child("walls")?.elements() ?? []
        try limit(wallCursors.count, Limits.walls, path: "venue.walls", what: "walls")
        for cursor in wallCursors {
            let wall = try cursor.object(allowing: ["from", "to", "attenuation", "name"])
            walls.append(Wall(from: try point(wall.required("from"), within: bounds),
                              to: try point(wall.required("to"), within: bounds),
                              attenuation: try wall.number("attenuation", default: 5, in: 0...200)))
        }
        let venue = Venue(width: width, height: height, walls: walls)
        let (rooms, doors) = try roomsAndDoors(root, bounds: bounds)

        let channel = try root.child("channel").map { cursor throws(ScenarioError) in try channelModel(cursor) } ?? ChannelModel()

        let beaconCursors = try root.required("beacons").elements()
        guard !beaconCursors.isEmpty else {
            throw ScenarioError(path: "beacons", expected: "at least one beacon", found: "an empty array")
        }
        try limit(beaconCursors.count, Limits.beacons, path: "beacons", what: "beacons")
        var beacons: [SimulatedBeacon] = []
        var addresses: Set<BluetoothAddress> = []
        for (index, cursor) in beaconCursors.enumerated() {
            let beacon = try self.beacon(cursor, index: index, defaultUUID: defaultUUID, bounds: bounds)
            guard addresses.insert(beacon.address).inserted else {
                throw ScenarioError(path: "\(cursor.path).address", expected: "an address no other beacon uses",
                                    found: "\"\(beacon.address)\" again")
            }
            beacons.append(beacon)
        }

        let receiverCursors = try root.required("receivers").elements()
        guard !receiverCursors.isEmpty else {
            throw ScenarioError(path: "receivers", expected: "at least one receiver", found: "an empty array")
        }
        try limit(receiverCursors.count * beaconCursors.count, Limits.links, path: "receivers",
                  what: "receiver–beacon links", detail: "\(receiverCursors.count) receivers × \(beaconCursors.count) beacons")
        var receivers: [SimulatedReceiver] = []
        for (index, cursor) in receiverCursors.enumerated() {
            let receiver = try self.receiver(cursor, index: index, bounds: bounds)
            if receivers.contains(where: { $0.name == receiver.name }) {
                throw ScenarioError(path: "\(cursor.path).name", expected: "a name no other receiver uses", found: "\"\(receiver.name)\" again")
            }
            receivers.append(receiver)
        }

        var regions: [SimulatedRegion] = []
        let regionCursors = try root.child("regions")?.elements() ?? []
        try limit(regionCursors.count * beaconCursors.count, Limits.regionMemberships, path: "regions",
                  what: "region–beacon pairs", detail: "\(regionCursors.count) regions × \(beaconCursors.count) beacons")
        for cursor in regionCursors {
            let region = try cursor.object(allowing: ["name", "uuid", "major", "minor"])
            let uuid = try region.child("uuid").map { cursor throws(ScenarioError) in try parseUUID(cursor) } ?? defaultUUID
            guard let uuid else {
                throw ScenarioError(path: "\(cursor.path).uuid", expected: "a UUID (or a top-level \"uuid\")", found: "nothing")
            }
            let major = try region.child("major").map { cursor throws(ScenarioError) in UInt16(try cursor.integer(in: 0...65535)) }
            let minor = try region.child("minor").map { cursor throws(ScenarioError) in UInt16(try cursor.integer(in: 0...65535)) }
            if minor != nil && major == nil {
                throw ScenarioError(path: "\(cursor.path).minor", expected: "a minor only together with a major", found: "a minor without a major")
            }
            let regionName = try region.string("name") ?? [uuid.uuidString, major.map(String.init), minor.map(String.init)]
                .compactMap { $0 }.joined(separator: ".")
            regions.append(SimulatedRegion(name: regionName, uuid: uuid, major: major, minor: minor))
        }
        var scenario = Scenario(name: name, seed: seed, duration: duration, venue: venue, channel: channel,
                                beacons: beacons, receivers: receivers, regions: regions.isEmpty ? nil : regions)
        scenario.rooms = rooms
        scenario.doors = doors
        if let faults = root.child("faults") { try applyFaults(faults, to: &scenario, defaultUUID: defaultUUID) }
        if let queue = root.child("queue") { try applyQueue(queue, to: &scenario) }
        if let attacks = root.child("attacks") { try applyAttacks(attacks, to: &scenario) }
        _ = try advertisers(root.child("advertisers"), beacons: scenario.beacons)
        return scenario
    }

    /// Bounds that keep an untrusted scenario from exhausting memory or time at start-up. The
    /// simulation keeps state per receiver–beacon link (about 150 bytes each).
    public enum Limits {
        public static let beacons = 100_000
        public static let walls = 10_000
        public static let waypoints = 100_000
        public static let links = 2_000_000
        public static let regionMemberships = 10_000_000
        /// Simulated seconds (about 116 days), whether the file or a `--duration` flag sets them.
        public static let duration = 1e7
    }

    /// The durations a scenario may have, in seconds.
    public static let durationRange: ClosedRange<Double> = 0.001...Limits.duration

    /// Checks a duration given apart from the file (a command's `--duration`) against the same
    /// limit as the file's `duration`; `field` names where it came from in the error.
    public static func checkDuration(_ seconds: Double, field: String) throws(ScenarioError) {
        guard durationRange.contains(seconds) else {
            throw ScenarioError(path: field, expected: "a number of seconds in 0.001…\(Int(Limits.duration)) (the scenario limit)",
                                found: "\(seconds)")
        }
    }

    private static func limit(_ count: Int, _ maximum: Int, path: String, what: String, detail: String = "") throws(ScenarioError) {
        guard count <= maximum else {
            throw ScenarioError(path: path, expected: "at most \(maximum) \(what)", found: "\(count)\(detail.isEmpty ? "" : " (\(detail))")")
        }
    }

    private static func parseUUID(_ cursor: JSONCursor) throws(ScenarioError) -> UUID {
        let text = try cursor.string()
        guard let uuid = UUID(uuidString: text) else {
            throw ScenarioError(path: cursor.path, expected: "a UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                                found: cursor.value.shortDescription)
        }
        return uuid
    }

    static func point(_ cursor: JSONCursor, within bounds: (width: Double, height: Double)) throws(ScenarioError) -> Position3D {
        let object = try cursor.object(allowing: ["x", "y", "z"])
        return Position3D(x: try object.required("x").number(in: 0...bounds.width),
                     y: try object.required("y").number(in: 0...bounds.height),
                     z: try object.number("z", default: 0, in: -100...1000))
    }

    private static func channelModel(_ cursor: JSONCursor) throws(ScenarioError) -> ChannelModel {
        let object = try cursor.object(allowing: [
            "pathLossExponent", "referenceLoss", "shadowing", "fading", "sensitivity", "bodyLoss",
            "captureRatio", "presenceThreshold", "quantize",
        ])
        let standard = ChannelModel()
        let sensitivity = try object.number("sensitivity", default: standard.sensitivity, in: -140 ... -20)
        var model = ChannelModel(
            pathLossExponent: try object.number("pathLossExponent", default: standard.pathLossExponent, in: 1...6),
            referenceLoss: try object.number("referenceLoss", default: standard.referenceLoss, in: 0...150),
            sensitivity: sensitivity,
            bodyLoss: try object.number("bodyLoss", default: standard.bodyLoss, in: 0...60),
            captureRatio: try object.number("captureRatio", default: standard.captureRatio, in: 0...60),
            presenceThreshold: try object.number("presenceThreshold", default: sensitivity, in: -140 ... 0),
            quantize: try object.bool("quantize", default: true))
        if let shadowing = object.child("shadowing") {
            let fields = try shadowing.object(allowing: ["sigma", "correlationDistance"])
            model.shadowingSigma = try fields.number("sigma", default: standard.shadowingSigma, in: 0...20)
            model.correlationDistance = try fields.number("correlationDistance", default: standard.correlationDistance, in: 0...1000)
        }
        if let fading = object.child("fading") {
            let fields = try fading.object(allowing: ["model", "sigma", "kFactorNear", "rayleighDistance", "channelSpread"])
            let kind = try fields.required("model")
            switch try kind.string() {
            case "none": model.fading = .none
            case "lognormal": model.fading = .logNormal(sigma: try fields.number("sigma", default: 4, in: 0...20))
            case "rician":
                guard case .rician(let k, let rayleigh, let spread) = ChannelModel.Fading.standard else { break }
                model.fading = .rician(kFactorNear: try fields.number("kFactorNear", default: k, in: 0...30),
                                       rayleighDistance: try fields.number("rayleighDistance", default: rayleigh, in: 1...1000),
                                       channelSpread: try fields.number("channelSpread", default: spread, in: 0...10))
            default:
                throw ScenarioError(path: kind.path, expected: "\"rician\", \"lognormal\" or \"none\"", found: kind.value.shortDescription)
            }
        }
        return model
    }

    private static func beacon(_ cursor: JSONCursor, index: Int, defaultUUID: UUID?,
                               bounds: (width: Double, height: Double)) throws(ScenarioError) -> SimulatedBeacon {
        let object = try cursor.object(allowing: [
            "name", "uuid", "major", "minor", "position", "measuredPower", "txPower", "interval", "battery", "tlm", "address",
            "path", "switching", "batteryType", "rotation",
        ])
        let (position, path) = try beaconPlacement(object, path: cursor.path, bounds: bounds)
        let uuid = try object.child("uuid").map { cursor throws(ScenarioError) in try parseUUID(cursor) } ?? defaultUUID
        guard let uuid else {
            throw ScenarioError(path: "\(cursor.path).uuid", expected: "a UUID (or a top-level \"uuid\" for all beacons)", found: "nothing")
        }
        let major = UInt16(try object.required("major").integer(in: 0...65535))
        let minor = UInt16(try object.required("minor").integer(in: 0...65535))
        var address = BluetoothAddress(rawValue: 0xC0_00_00_00_00_00 | UInt64(index + 1))
        if let addressCursor = object.child("address") {
            let text = try addressCursor.string()
            guard let parsed = BluetoothAddress(text) else {
                throw ScenarioError(path: addressCursor.path, expected: "an address like C0:00:00:00:00:01", found: addressCursor.value.shortDescription)
            }
            address = parsed
        }
        var beacon = SimulatedBeacon(
            name: try object.string("name") ?? "beacon \(major).\(minor)",
            identity: BeaconIdentity(uuid: uuid, major: major, minor: minor),
            address: address,
            position: position,
            measuredPower: MeasuredPower(Int8(try object.child("measuredPower")?.integer(in: -128...127) ?? -59)),
            txPower: try object.number("txPower", default: 0, in: -40...20),
            // Core Spec Vol 6 Part B §4.4.2.2.1: advInterval is 20 ms to 10.24 s.
            interval: try object.number("interval", default: 0.1, in: 0.02...10.24),
            batteryMillivolts: UInt16(try object.child("battery")?.integer(in: 0...65535) ?? 3000),
            telemetry: try object.bool("tlm", default: false),
            path: path,
            switching: try object.child("switching").map { cursor throws(ScenarioError) in try switching(cursor) })
        if let type = try object.string("batteryType") {
            guard (1...40).contains(type.count), !type.contains(where: \.isNewline) else {
                throw ScenarioError(path: "\(cursor.path).batteryType", expected: "a battery type of 1–40 characters on one line, like CR2477",
                                    found: "\"\(type.prefix(60))\"")
            }
            beacon.batteryType = type
        }
        if let rotation = object.child("rotation") {
            beacon.rotation = try rotatingIdentity(rotation, uuid: uuid)
        }
        return beacon
    }

    private static func receiver(_ cursor: JSONCursor, index: Int,
                                 bounds: (width: Double, height: Double)) throws(ScenarioError) -> SimulatedReceiver {
        let object = try cursor.object(allowing: ["name", "position", "path", "antennaGain", "dutyCycle", "scanInterval", "body"])
        let placement: SimulatedReceiver.Placement
        switch (object.child("position"), object.child("path")) {
        case (let position?, nil):
            placement = .fixed(try point(position, within: bounds))
        case (nil, let path?):
            placement = .walking(try walkerPath(path, bounds: bounds))
        case (.some, .some):
            throw ScenarioError(path: "\(cursor.path).path", expected: "either \"position\" (a gateway) or \"path\" (a walker)", found: "both")
        case (nil, nil):
            throw ScenarioError(path: "\(cursor.path).position", expected: "a \"position\" (a gateway) or a \"path\" (a walker)", found: "neither")
        }
        return SimulatedReceiver(
            name: try object.string("name") ?? "receiver-\(index + 1)",
            placement: placement,
            antennaGain: try object.number("antennaGain", default: 0, in: -40...40),
            dutyCycle: try object.number("dutyCycle", default: 1, in: 0.001...1),
            scanInterval: try object.number("scanInterval", default: 0.1, in: 0.0025...10.24),
            body: try object.child("body")?.bool())
    }

    /// Reads a beacon's `rotation` object: `key` (hex or base64) and `period` ("10m", "24h" or seconds).
    private static func rotatingIdentity(_ cursor: JSONCursor, uuid: UUID) throws(ScenarioError) -> RotatingIdentity {
        let fields = try cursor.object(allowing: ["key", "period"])
        let keyCursor = try fields.required("key")
        let key: RotationKey
        do { key = try RotationKey(parsing: try keyCursor.string()) } catch let error as RotationInputError {
            throw ScenarioError(path: keyCursor.path, expected: "a rotation key of 16 to 32 bytes in hex or base64", found: error.reason)
        } catch let error as ScenarioError { throw error } catch {
            throw ScenarioError(path: keyCursor.path, expected: "a rotation key", found: "\(error)")
        }
        var period = RotationPeriod.day
        if let periodCursor = fields.child("period") {
            do {
                if case .number(let seconds) = periodCursor.value {
                    period = try RotationPeriod(seconds: Int(exactly: seconds) ?? -1)
                } else {
                    period = try RotationPeriod(parsing: try periodCursor.string())
                }
            } catch let error as RotationInputError {
                throw ScenarioError(path: periodCursor.path, expected: "a rotation period of 1 minute to 366 days (\"10m\", \"24h\" or seconds)",
                                    found: error.reason)
            } catch let error as ScenarioError { throw error } catch {
                throw ScenarioError(path: periodCursor.path, expected: "a rotation period", found: "\(error)")
            }
        }
        return RotatingIdentity(uuid: uuid, key: key, period: period)
    }

    static func walkerPath(_ cursor: JSONCursor, bounds: (width: Double, height: Double)) throws(ScenarioError) -> WalkerPath {
        let object = try cursor.object(allowing: ["waypoints", "speed", "loop", "start"])
        let waypointCursors = try object.required("waypoints").elements()
        guard !waypointCursors.isEmpty else {
            throw ScenarioError(path: "\(cursor.path).waypoints", expected: "at least one waypoint", found: "an empty array")
        }
        try limit(waypointCursors.count, Limits.waypoints, path: "\(cursor.path).waypoints", what: "waypoints")
        var waypoints: [WalkerPath.Waypoint] = []
        for waypoint in waypointCursors {
            let fields = try waypoint.object(allowing: ["x", "y", "z", "pause"])
            let position = Position3D(x: try fields.required("x").number(in: 0...bounds.width),
                                 y: try fields.required("y").number(in: 0...bounds.height),
                                 z: try fields.number("z", default: 0, in: -100...1000))
            waypoints.append(.init(position, pause: try fields.number("pause", default: 0, in: 0...1e7)))
        }
        return WalkerPath(waypoints: waypoints,
                          speed: try object.number("speed", default: 1.2, in: 0.01...50),
                          loop: try object.bool("loop", default: false),
                          start: try object.number("start", default: 0, in: 0...1e7))
    }
}
