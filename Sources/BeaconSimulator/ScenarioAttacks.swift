import BeaconKit
import Foundation

/// An attack on a site's trust in its sightings (issue 15), with the truth of what it forged:
/// the sightings it produced are marked with its index (see ``AttackedSimulation``).
public struct ScenarioAttack: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Transmitters at one place (`transmitters`, added to the scenario's beacons) copy the
        /// identities of fixed beacons (`originals`) from `at` until `until`.
        case spoofer(originals: [Int], transmitters: [Int], at: Double, until: Double)
        /// A transmitter (`clone`, added) sends `original`'s identity while moving along a path
        /// faster than a person walks, from `at`.
        case fastClone(original: Int, clone: Int, at: Double)
        /// A receiver's timestamps are off by `offset` seconds plus `drift` seconds per second
        /// from `at`.
        case clockSkew(receiver: Int, at: Double, offset: Double, drift: Double)
        /// What `capturedBy` heard of `beacons` in `from..<to` is sent again from `at` through
        /// `via`, with the original timestamps or with fresh ones (a radio replay).
        case replay(beacons: [Int], capturedBy: Int, from: Double, to: Double, at: Double, via: Int, freshTimestamps: Bool)
    }

    public var name: String
    public var kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The key of the attack's kind in a scenario file.
    public var kindName: String {
        switch kind {
        case .spoofer: "spoofer"
        case .fastClone: "fastClone"
        case .clockSkew: "clockSkew"
        case .replay: "replay"
        }
    }

    /// When the attack starts.
    public var start: Double {
        switch kind {
        case .spoofer(_, _, let at, _), .fastClone(_, _, let at), .clockSkew(_, let at, _, _), .replay(_, _, _, _, let at, _, _): at
        }
    }

    /// When it ends, at the latest the end of the scenario.
    public func end(duration: Double) -> Double {
        switch kind {
        case .spoofer(_, _, _, let until): Swift.min(until, duration)
        case .fastClone, .clockSkew: duration
        case .replay(_, _, let from, let to, let at, _, _): Swift.min(duration, at + (to - from))
        }
    }

    /// The transmitters the attack added to the scenario.
    public var addedTransmitters: [Int] {
        switch kind {
        case .spoofer(_, let transmitters, _, _): transmitters
        case .fastClone(_, let clone, _): [clone]
        case .clockSkew, .replay: []
        }
    }
}

extension Scenario {
    /// Most attacks one scenario may describe.
    public static let attackLimit = 1_000

    /// Reads the top-level `attacks` array (docs/scenarios.md, "Attacks"): resolves beacon and
    /// receiver names and appends the transmitters a spoofer or fast clone adds.
    static func applyAttacks(_ cursor: JSONCursor, to scenario: inout Scenario) throws(ScenarioError) {
        let items = try cursor.elements()
        guard items.count <= attackLimit else {
            throw ScenarioError(path: cursor.path, expected: "at most \(attackLimit) attacks", found: "\(items.count)")
        }
        let bounds = (width: scenario.venue.width, height: scenario.venue.height)
        let time = 0...Limits.duration
        var names = Set<String>()
        for (index, item) in items.enumerated() {
            let kindCursor = try item.object(allowing: [
                "kind", "name", "beacons", "beacon", "position", "at", "until", "txPower", "interval", "copyAddress", "path",
                "receiver", "offset", "drift", "capturedBy", "from", "to", "via", "timestamps",
            ]).required("kind")
            let kind = try kindCursor.string()
            func allow(_ keys: Set<String>) throws(ScenarioError) -> JSONCursor {
                try item.object(allowing: keys.union(["kind", "name"]))
            }
            let name = try item.string("name") ?? "\(kind) \(index + 1)"
            guard names.insert(name).inserted else {
                throw ScenarioError(path: "\(item.path).name", expected: "a name no other attack uses", found: "\"\(name)\" again")
            }
            switch kind {
            case "spoofer":
                let fields = try allow(["beacons", "position", "at", "until", "txPower", "interval", "copyAddress"])
                let beaconsCursor = try fields.required("beacons")
                let elements = try beaconsCursor.elements()
                guard !elements.isEmpty, elements.count <= Limits.beacons else {
                    throw ScenarioError(path: beaconsCursor.path, expected: "1 to \(Limits.beacons) beacon names", found: "\(elements.count)")
                }
                var originals: [Int] = []
                for element in elements {
                    let original = try beaconIndex(element, in: scenario)
                    guard scenario.beacons[original].path == nil else {
                        throw ScenarioError(path: element.path, expected: "a fixed beacon (one with a \"position\")", found: "a carried beacon")
                    }
                    originals.append(original)
                }
                let at = try fields.required("at").number(in: time)
                let until = try fields.child("until").map { cursor throws(ScenarioError) -> Double in
                    let until = try cursor.number(in: time)
                    guard until > at else { throw ScenarioError(path: cursor.path, expected: "a time after \"at\" (\(at))", found: "\(until)") }
                    return until
                } ?? Limits.duration
                let position = try point(fields.required("position"), within: bounds)
                let txPower = try fields.number("txPower", default: 0, in: -40...20)
                let interval = try fields.number("interval", default: 0.1, in: 0.02...10.24)
                let copyAddress = try fields.bool("copyAddress", default: true)
                var transmitters: [Int] = []
                for original in originals {
                    let source = scenario.beacons[original]
                    transmitters.append(scenario.beacons.count)
                    scenario.beacons.append(SimulatedBeacon(
                        name: "\(name): copy of \(source.name)", identity: source.identity,
                        address: copyAddress ? source.address : attackAddress(scenario.beacons.count),
                        position: position, measuredPower: source.measuredPower, txPower: txPower, interval: interval))
                }
                scenario.attacks.append(ScenarioAttack(name: name, kind: .spoofer(originals: originals, transmitters: transmitters, at: at, until: until)))
            case "fastClone":
                let fields = try allow(["beacon", "at", "path", "txPower", "interval", "copyAddress"])
                let original = try beaconIndex(fields.required("beacon"), in: scenario)
                let at = try fields.required("at").number(in: time)
                let pathCursor = try fields.required("path")
                var path = try walkerPath(pathCursor, bounds: bounds)
                guard path.speed > fastCloneMinimumSpeed else {
                    throw ScenarioError(path: "\(pathCursor.path).speed", expected: "a speed above a person's walk (more than \(fastCloneMinimumSpeed) m/s)",
                                        found: "\(path.speed)")
                }
                if pathCursor.child("start") == nil { path = WalkerPath(waypoints: path.waypoints, speed: path.speed, loop: path.loop, start: at) }
                let source = scenario.beacons[original]
                let clone = scenario.beacons.count
                scenario.beacons.append(SimulatedBeacon(
                    name: "\(name): clone of \(source.name)", identity: source.identity,
                    address: try fields.bool("copyAddress", default: true) ? source.address : attackAddress(clone),
                    position: path.waypoints[0].point, measuredPower: source.measuredPower,
                    txPower: try fields.number("txPower", default: source.txPower, in: -40...20),
                    interval: try fields.number("interval", default: source.interval, in: 0.02...10.24), path: path))
                scenario.attacks.append(ScenarioAttack(name: name, kind: .fastClone(original: original, clone: clone, at: at)))
            case "clockSkew":
                let fields = try allow(["receiver", "at", "offset", "drift"])
                let receiver = try receiverIndex(fields.required("receiver"), in: scenario)
                let at = try fields.number("at", default: 0, in: time)
                let offset = try fields.number("offset", default: 0, in: -1e7...1e7)
                let drift = try fields.number("drift", default: 0, in: -1...1)
                guard offset != 0 || drift != 0 else {
                    throw ScenarioError(path: "\(fields.path).offset", expected: "a non-zero \"offset\" or \"drift\"", found: "neither")
                }
                scenario.attacks.append(ScenarioAttack(name: name, kind: .clockSkew(receiver: receiver, at: at, offset: offset, drift: drift)))
            case "replay":
                let fields = try allow(["beacons", "capturedBy", "from", "to", "at", "via", "timestamps"])
                let beaconsCursor = try fields.required("beacons")
                let elements = try beaconsCursor.elements()
                guard !elements.isEmpty, elements.count <= Limits.beacons else {
                    throw ScenarioError(path: beaconsCursor.path, expected: "1 to \(Limits.beacons) beacon names", found: "\(elements.count)")
                }
                var beacons: [Int] = []
                for element in elements { beacons.append(try beaconIndex(element, in: scenario)) }
                let capturedBy = try receiverIndex(fields.required("capturedBy"), in: scenario)
                let from = try fields.required("from").number(in: time)
                let toCursor = try fields.required("to")
                let to = try toCursor.number(in: time)
                guard to > from else { throw ScenarioError(path: toCursor.path, expected: "a time after \"from\" (\(from))", found: "\(to)") }
                let atCursor = try fields.required("at")
                let at = try atCursor.number(in: time)
                guard at >= to else { throw ScenarioError(path: atCursor.path, expected: "a time at or after \"to\" (\(to)): a replay follows its capture", found: "\(at)") }
                let via = try fields.child("via").map { cursor throws(ScenarioError) in try receiverIndex(cursor, in: scenario) } ?? capturedBy
                var fresh = true
                if let timestamps = fields.child("timestamps") {
                    switch try timestamps.string() {
                    case "fresh": fresh = true
                    case "original": fresh = false
                    default: throw ScenarioError(path: timestamps.path, expected: "\"fresh\" or \"original\"", found: timestamps.value.shortDescription)
                    }
                }
                scenario.attacks.append(ScenarioAttack(name: name, kind: .replay(
                    beacons: beacons, capturedBy: capturedBy, from: from, to: to, at: at, via: via, freshTimestamps: fresh)))
            default:
                throw ScenarioError(path: kindCursor.path, expected: "\"spoofer\", \"fastClone\", \"clockSkew\" or \"replay\"",
                                    found: kindCursor.value.shortDescription)
            }
        }
        let links = scenario.receivers.count * scenario.beacons.count
        guard links <= Limits.links else {
            throw ScenarioError(path: "attacks", expected: "at most \(Limits.links) receiver–beacon links with the added transmitters",
                                found: "\(links) (\(scenario.receivers.count) receivers × \(scenario.beacons.count) beacons)")
        }
    }

    /// A fast clone must outrun this (m/s): faster than anyone walks, or it is just a clone.
    public static let fastCloneMinimumSpeed = 2.5

    private static func attackAddress(_ index: Int) -> BluetoothAddress {
        BluetoothAddress(rawValue: 0xE0_00_00_00_00_00 | UInt64(index + 1))
    }

    private static func receiverIndex(_ cursor: JSONCursor, in scenario: Scenario) throws(ScenarioError) -> Int {
        let name = try cursor.string()
        guard let index = scenario.receivers.firstIndex(where: { $0.name == name }) else {
            throw ScenarioError(path: cursor.path, expected: "the name of a receiver", found: cursor.value.shortDescription)
        }
        return index
    }

    /// Each transmitter's attack (index into `attacks`), nil for honest ones.
    public func attackOfTransmitter() -> [Int?] {
        var owners = [Int?](repeating: nil, count: beacons.count)
        for (index, attack) in attacks.enumerated() {
            for transmitter in attack.addedTransmitters { owners[transmitter] = index }
        }
        return owners
    }
}
