import BeaconFleet
import BeaconKit
import Foundation

/// A fixed beacon's new place from a time on (a `move` fault).
public struct BeaconRelocation: Sendable, Hashable {
    public var at: Double
    public var position: Position3D

    public init(at: Double, position: Position3D) {
        self.at = at
        self.position = position
    }
}

/// How a battery's voltage falls to its cutoff: linearly from `start`, optionally bending at a
/// knee (a coin cell's flat plateau, then a steep end), reaching `cutoffMillivolts` at `death`.
/// The beacon is silent from `death` on, so the true days left at any time is `death − time`.
public struct BatteryDischarge: Sendable, Hashable {
    /// Where the fall steepens: the voltage reached at a time.
    public struct Knee: Sendable, Hashable {
        public var at: Double
        public var millivolts: Double

        public init(at: Double, millivolts: Double) {
            self.at = at
            self.millivolts = millivolts
        }
    }

    public var start: Double
    public var startMillivolts: Double
    public var knee: Knee?
    public var death: Double
    public var cutoffMillivolts: Double

    public init(start: Double, startMillivolts: Double, knee: Knee? = nil,
                death: Double, cutoffMillivolts: Double) {
        self.start = start
        self.startMillivolts = startMillivolts
        self.knee = knee
        self.death = death
        self.cutoffMillivolts = cutoffMillivolts
    }

    /// The voltage under load at a time (the cutoff from `death` on).
    public func millivolts(at time: Double) -> Double {
        if time <= start { return startMillivolts }
        if time >= death { return cutoffMillivolts }
        var points = [(start, startMillivolts)]
        if let knee { points.append((knee.at, knee.millivolts)) }
        points.append((death, cutoffMillivolts))
        for index in 1..<points.count where time <= points[index].0 {
            let (t0, v0) = points[index - 1], (t1, v1) = points[index]
            return t1 > t0 ? v0 + (v1 - v0) * (time - t0) / (t1 - t0) : v1
        }
        return cutoffMillivolts
    }
}

/// A fault injected into a scenario on purpose: what the fleet checks must find, and when it
/// happened (the truth they are scored against).
public struct ScenarioFault: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The beacon's battery runs down along `discharge`, then the beacon falls silent.
        case batteryDeath(beacon: Int, discharge: BatteryDischarge)
        /// A fixed beacon is moved to `to` at `at`.
        case move(beacon: Int, at: Double, to: Position3D)
        /// A transmitter unknown to the registry (`beacon`, an index into the scenario's beacons
        /// added for it) starts at `at`.
        case rogue(beacon: Int, at: Double)
        /// A second transmitter (`clone`, added for it) sends `original`'s identity from another
        /// address and place from `at`.
        case clone(original: Int, clone: Int, at: Double)
        /// A receiver hears nothing in `from..<to`; its gateway posts nothing.
        case receiverOffline(receiver: Int, from: Double, to: Double)
    }

    public var kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    /// When the fault starts.
    public var time: Double {
        switch kind {
        case .batteryDeath(_, let discharge): discharge.start
        case .move(_, let at, _), .rogue(_, let at), .clone(_, _, let at): at
        case .receiverOffline(_, let from, _): from
        }
    }

    /// The key of the fault's kind in a scenario file.
    public var kindName: String {
        switch kind {
        case .batteryDeath: "batteryDeath"
        case .move: "move"
        case .rogue: "rogue"
        case .clone: "clone"
        case .receiverOffline: "receiverOffline"
        }
    }
}

extension Scenario {
    /// Most faults one scenario may inject.
    public static let faultLimit = 10_000

    /// Beacons a registry holds: every transmitter except those a `rogue` or `clone` fault added.
    public var registeredBeacons: [SimulatedBeacon] {
        let added = Set(faults.compactMap { fault -> Int? in
            switch fault.kind {
            case .rogue(let beacon, _): beacon
            case .clone(_, let clone, _): clone
            default: nil
            }
        }).union(attacks.flatMap(\.addedTransmitters))
        return beacons.indices.filter { !added.contains($0) }.map { beacons[$0] }
    }

    /// Each beacon's battery discharge, nil for beacons whose battery stays full.
    func batteryDischarges() -> [BatteryDischarge?] {
        var discharges = [BatteryDischarge?](repeating: nil, count: beacons.count)
        for fault in faults {
            if case .batteryDeath(let beacon, let discharge) = fault.kind { discharges[beacon] = discharge }
        }
        return discharges
    }

    /// Each receiver's offline periods, sorted.
    func receiverOutages() -> [[Range<Double>]] {
        var outages = [[Range<Double>]](repeating: [], count: receivers.count)
        for fault in faults {
            if case .receiverOffline(let receiver, let from, let to) = fault.kind { outages[receiver].append(from..<to) }
        }
        return outages.map { $0.sorted { $0.lowerBound < $1.lowerBound } }
    }

    /// What each beacon transmits by: its `switching` periods, plus silence after a battery's
    /// death and before an added rogue or clone appears.
    public func transmissionSchedule() -> [[Range<Double>]] {
        var schedule = switchSchedule()
        for fault in faults {
            switch fault.kind {
            case .batteryDeath(let beacon, let discharge) where discharge.death < duration:
                schedule[beacon].append(discharge.death..<duration)
            case .rogue(let beacon, let at) where at > 0:
                schedule[beacon].append(0..<at)
            case .clone(_, let clone, let at) where at > 0:
                schedule[clone].append(0..<at)
            default:
                break
            }
        }
        for attack in attacks {
            let end = attack.end(duration: duration)
            for transmitter in attack.addedTransmitters {
                if attack.start > 0 { schedule[transmitter].append(0..<attack.start) }
                if end < duration { schedule[transmitter].append(end..<duration) }
            }
        }
        return schedule.map(Self.merged)
    }

    static func merged(_ intervals: [Range<Double>]) -> [Range<Double>] {
        var merged: [Range<Double>] = []
        for interval in intervals.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, interval.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<Swift.max(last.upperBound, interval.upperBound)
            } else {
                merged.append(interval)
            }
        }
        return merged
    }

    /// Reads the top-level `faults` array (docs/scenarios.md, "Faults"): resolves beacon and
    /// receiver names, appends the transmitters a rogue or clone adds, and records the truth.
    static func applyFaults(_ cursor: JSONCursor, to scenario: inout Scenario, defaultUUID: UUID?) throws(ScenarioError) {
        let items = try cursor.elements()
        guard items.count <= faultLimit else {
            throw ScenarioError(path: cursor.path, expected: "at most \(faultLimit) faults", found: "\(items.count)")
        }
        let bounds = (width: scenario.venue.width, height: scenario.venue.height)
        let time = 0...Limits.duration
        var addresses = Set(scenario.beacons.map(\.address))
        for item in items {
            let kindCursor = try item.object(allowing: [
                "kind", "beacon", "receiver", "start", "death", "knee", "cutoff", "at", "to", "from", "position", "name", "uuid",
                "major", "minor", "interval", "address", "txPower", "measuredPower",
            ]).required("kind")
            let kind = try kindCursor.string()
            func allow(_ keys: Set<String>) throws(ScenarioError) -> JSONCursor {
                try item.object(allowing: keys.union(["kind"]))
            }
            func newAddress(_ fields: JSONCursor, fallbackIndex: Int) throws(ScenarioError) -> BluetoothAddress {
                var address = BluetoothAddress(rawValue: 0xD0_00_00_00_00_00 | UInt64(fallbackIndex + 1))
                if let addressCursor = fields.child("address") {
                    guard let parsed = BluetoothAddress(try addressCursor.string()) else {
                        throw ScenarioError(path: addressCursor.path, expected: "an address like D0:00:00:00:00:01",
                                            found: addressCursor.value.shortDescription)
                    }
                    address = parsed
                }
                guard addresses.insert(address).inserted else {
                    throw ScenarioError(path: "\(fields.path).address", expected: "an address no other beacon uses", found: "\"\(address)\" again")
                }
                return address
            }
            switch kind {
            case "batteryDeath":
                let fields = try allow(["beacon", "start", "death", "knee", "cutoff"])
                let beacon = try beaconIndex(fields.required("beacon"), in: scenario)
                let start = try fields.number("start", default: 0, in: time)
                let deathCursor = try fields.required("death")
                let death = try deathCursor.number(in: time)
                guard death > start else {
                    throw ScenarioError(path: deathCursor.path, expected: "a time after \"start\" (\(start))", found: "\(death)")
                }
                let full = Double(scenario.beacons[beacon].batteryMillivolts)
                let typeCutoff = BatteryType.named(scenario.beacons[beacon].batteryType).cutoffMillivolts
                let cutoffCursor = fields.child("cutoff")
                let cutoff = try cutoffCursor?.number(in: 0...65535) ?? typeCutoff
                guard cutoff < full else {
                    throw ScenarioError(path: cutoffCursor?.path ?? "\(fields.path).cutoff",
                                        expected: "a cutoff below the beacon's battery (\(Int(full)) mV)", found: "\(Int(cutoff))")
                }
                var knee: BatteryDischarge.Knee?
                if let kneeCursor = fields.child("knee") {
                    let kneeFields = try kneeCursor.object(allowing: ["at", "millivolts"])
                    let at = try kneeFields.required("at").number(in: time)
                    guard at > start && at < death else {
                        throw ScenarioError(path: "\(kneeCursor.path).at", expected: "a time between \"start\" (\(start)) and \"death\" (\(death))",
                                            found: "\(at)")
                    }
                    let millivolts = try kneeFields.required("millivolts").number(in: cutoff...full)
                    knee = BatteryDischarge.Knee(at: at, millivolts: millivolts)
                }
                scenario.faults.append(ScenarioFault(.batteryDeath(beacon: beacon, discharge: BatteryDischarge(
                    start: start, startMillivolts: full, knee: knee, death: death, cutoffMillivolts: cutoff))))
            case "move":
                let fields = try allow(["beacon", "at", "to"])
                let beaconCursor = try fields.required("beacon")
                let beacon = try beaconIndex(beaconCursor, in: scenario)
                guard scenario.beacons[beacon].path == nil else {
                    throw ScenarioError(path: beaconCursor.path, expected: "a fixed beacon (one with a \"position\")", found: "a carried beacon")
                }
                let at = try fields.required("at").number(in: time)
                let to = try point(fields.required("to"), within: bounds)
                scenario.beacons[beacon].relocations.append(BeaconRelocation(at: at, position: to))
                scenario.beacons[beacon].relocations.sort { $0.at < $1.at }
                scenario.faults.append(ScenarioFault(.move(beacon: beacon, at: at, to: to)))
            case "rogue":
                let fields = try allow(["at", "position", "name", "uuid", "major", "minor", "interval", "address", "txPower", "measuredPower"])
                let at = try fields.required("at").number(in: time)
                let uuidCursor = fields.child("uuid")
                let uuid = try uuidCursor.map { cursor throws(ScenarioError) -> UUID in
                    guard let uuid = UUID(uuidString: try cursor.string()) else {
                        throw ScenarioError(path: cursor.path, expected: "a UUID", found: cursor.value.shortDescription)
                    }
                    return uuid
                } ?? defaultUUID
                guard let uuid else {
                    throw ScenarioError(path: "\(fields.path).uuid", expected: "a UUID (or a top-level \"uuid\")", found: "nothing")
                }
                let major = UInt16(try fields.required("major").integer(in: 0...65535))
                let minor = UInt16(try fields.required("minor").integer(in: 0...65535))
                let identity = BeaconIdentity(uuid: uuid, major: major, minor: minor)
                if scenario.beacons.contains(where: { $0.identity == identity }) {
                    throw ScenarioError(path: "\(fields.path).minor", expected: "an identity no scenario beacon has (a rogue is unknown)",
                                        found: "\(identity) again")
                }
                let index = scenario.beacons.count
                scenario.beacons.append(SimulatedBeacon(
                    name: try fields.string("name") ?? "rogue \(major).\(minor)", identity: identity,
                    address: try newAddress(fields, fallbackIndex: index), position: try point(fields.required("position"), within: bounds),
                    measuredPower: MeasuredPower(Int8(try fields.child("measuredPower")?.integer(in: -128...127) ?? -59)),
                    txPower: try fields.number("txPower", default: 0, in: -40...20),
                    interval: try fields.number("interval", default: 1, in: 0.02...10.24)))
                scenario.faults.append(ScenarioFault(.rogue(beacon: index, at: at)))
            case "clone":
                let fields = try allow(["beacon", "at", "position", "name", "interval", "address", "txPower"])
                let original = try beaconIndex(fields.required("beacon"), in: scenario)
                let at = try fields.required("at").number(in: time)
                let source = scenario.beacons[original]
                let index = scenario.beacons.count
                scenario.beacons.append(SimulatedBeacon(
                    name: try fields.string("name") ?? "clone of \(source.name)", identity: source.identity,
                    address: try newAddress(fields, fallbackIndex: index), position: try point(fields.required("position"), within: bounds),
                    measuredPower: source.measuredPower, txPower: try fields.number("txPower", default: source.txPower, in: -40...20),
                    interval: try fields.number("interval", default: source.interval, in: 0.02...10.24)))
                scenario.faults.append(ScenarioFault(.clone(original: original, clone: index, at: at)))
            case "receiverOffline":
                let fields = try allow(["receiver", "from", "to"])
                let receiverCursor = try fields.required("receiver")
                let name = try receiverCursor.string()
                guard let receiver = scenario.receivers.firstIndex(where: { $0.name == name }) else {
                    throw ScenarioError(path: receiverCursor.path, expected: "the name of a receiver", found: receiverCursor.value.shortDescription)
                }
                let from = try fields.required("from").number(in: time)
                let toCursor = try fields.required("to")
                let to = try toCursor.number(in: time)
                guard to > from else {
                    throw ScenarioError(path: toCursor.path, expected: "a time after \"from\" (\(from))", found: "\(to)")
                }
                scenario.faults.append(ScenarioFault(.receiverOffline(receiver: receiver, from: from, to: to)))
            default:
                throw ScenarioError(path: kindCursor.path, expected: "\"batteryDeath\", \"move\", \"rogue\", \"clone\" or \"receiverOffline\"",
                                    found: kindCursor.value.shortDescription)
            }
        }
        try limitLinks(scenario)
    }

    static func beaconIndex(_ cursor: JSONCursor, in scenario: Scenario) throws(ScenarioError) -> Int {
        let name = try cursor.string()
        let matches = scenario.beacons.indices.filter { scenario.beacons[$0].name == name }
        guard matches.count == 1 else {
            throw ScenarioError(path: cursor.path, expected: "the name of exactly one beacon",
                                found: matches.isEmpty ? cursor.value.shortDescription : "\(matches.count) beacons named \"\(name)\"")
        }
        return matches[0]
    }

    private static func limitLinks(_ scenario: Scenario) throws(ScenarioError) {
        let links = scenario.receivers.count * scenario.beacons.count
        guard links <= Limits.links else {
            throw ScenarioError(path: "faults", expected: "at most \(Limits.links) receiver–beacon links with the added transmitters",
                                found: "\(links) (\(scenario.receivers.count) receivers × \(scenario.beacons.count) beacons)")
        }
    }
}
