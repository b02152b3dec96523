import BeaconKit
import Foundation

/// Turns the engine's events into MQTT messages (see ``BeaconTopics`` for the layout): a pure
/// state machine, fed events in order, that remembers only what it must to publish changes
/// (which beacons are present and were announced to Home Assistant), bounded by
/// ``Options/maximumBeacons``.
public struct BeaconMQTTPublisher: Sendable {
    public struct Options: Sendable, Hashable {
        /// The state a present beacon reports on its state topic: Home Assistant reads `home`
        /// as home and any other text as that zone's name.
        public var room = "home"
        public var homeAssistantDiscovery = true
        public var discoveryPrefix = "homeassistant"
        /// Also publish ESPresense's `espresense/devices/<id>/<node>` reports.
        public var espresense = false
        public var espresenseRoot = "espresense"
        /// The path-loss exponent for ESPresense's `raw` distance from the cycle's RSSI.
        public var pathLossExponent = 2.0
        /// Beacons tracked at once; beyond this, new beacons get no state, discovery or ranging
        /// topics until others leave (a flood of spoofed identities stays bounded).
        public var maximumBeacons = 10_000
        /// Publish a battery sensor for a beacon that also sends Eddystone-TLM from its address.
        public var battery = true
        /// A battery reading is published when it changes, and at least this often (seconds).
        public var batteryRepeat = 300.0

        public init() {}
    }

    private struct Track: Sendable {
        var firstSeen: Double
        var packets: Int
        var lastRanged: Double
        var lastDistance: Double?
        var lastDistanceTime: Double
    }

    public let topics: BeaconTopics
    public let options: Options
    public let discovery: HomeAssistantDiscovery
    private var tracks: [BeaconIdentity: Track] = [:]
    private var discovered: Set<BeaconIdentity> = []
    private var addresses: [BeaconIdentity: BluetoothAddress] = [:]
    /// Which tracked beacon an address advertised last, for its TLM frames.
    private var identities: [BluetoothAddress: BeaconIdentity] = [:]
    private var batteries: [BeaconIdentity: (millivolts: UInt16, time: Double)] = [:]
    private var batteryDiscovered: Set<BeaconIdentity> = []
    /// The attributes payload last published per tracked beacon, so it is sent only on change.
    private var attributes: [BeaconIdentity: [UInt8]] = [:]

    public init(topics: BeaconTopics, options: Options = Options()) {
        self.topics = topics
        self.options = options
        discovery = HomeAssistantDiscovery(topics: topics, discoveryPrefix: options.discoveryPrefix)
    }

    /// The last will: the broker publishes it when the gateway vanishes without a DISCONNECT.
    public var will: MQTTMessage { MQTTMessage(topic: topics.status, text: "offline", qos: .atLeastOnce, retain: true) }
    public var online: MQTTMessage { MQTTMessage(topic: topics.status, text: "online", qos: .atLeastOnce, retain: true) }
    /// Published before a clean disconnect, which makes the broker discard the will.
    public var offline: MQTTMessage { will }

    public var trackedBeacons: Int { tracks.count }

    /// Everything retained this publisher stands behind, again: the discovery configs of the beacons it announced, and the state and attributes of those it tracks.
    /// Sent after a reconnect (a restarted broker without persistence lost them) and when
    /// Home Assistant announces itself (it may have started after they were published).
    public func republished() -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        if options.homeAssistantDiscovery {
            // Departed beacons too: Home Assistant keeps an entity only while its config exists.
            for identity in discovered.sorted() {
                messages += discovery.messages(for: identity)
                if batteryDiscovered.contains(identity) { messages.append(discovery.batteryMessage(for: identity)) }
            }
        }
        for identity in discovered.union(tracks.keys).sorted() {
            let state = tracks[identity] == nil ? "not_home" : options.room
            messages.append(MQTTMessage(topic: topics.beaconState(identity), text: state, qos: .atLeastOnce, retain: true))
            if let body = attributes[identity] {
                messages.append(MQTTMessage(topic: topics.beaconAttributes(identity), payload: body, qos: .atLeastOnce, retain: true))
            }
        }
        return messages
    }

    /// Whether ``note(_:)`` needs to see every sighting.
    public var wantsSightings: Bool { options.espresense || options.battery }

    /// Remembers the address a beacon was last heard from (ESPresense's `mac` field, and the
    /// link from an Eddystone-TLM frame to the iBeacon sent from the same address); answers the
    /// battery messages a TLM frame of a tracked beacon brings.
    public mutating func note(_ sighting: Sighting) -> [MQTTMessage] {
        switch sighting.frame {
        case .iBeacon(let frame):
            guard addresses[frame.identity] != nil || addresses.count < options.maximumBeacons else { return [] }
            if let previous = addresses.updateValue(sighting.address, forKey: frame.identity), previous != sighting.address {
                identities[previous] = nil
            }
            identities[sighting.address] = frame.identity
            return []
        case .eddystone(.tlm(let telemetry)):
            guard options.battery, telemetry.batteryMillivolts > 0, let identity = identities[sighting.address], tracks[identity] != nil else { return [] }
            return batteryMessages(identity, telemetry: telemetry, time: sighting.time)
        default:
            return []
        }
    }

    private mutating func batteryMessages(_ identity: BeaconIdentity, telemetry: EddystoneTelemetry, time: Double) -> [MQTTMessage] {
        if let last = batteries[identity], last.millivolts == telemetry.batteryMillivolts, time - last.time < options.batteryRepeat { return [] }
        batteries[identity] = (telemetry.batteryMillivolts, time)
        var messages: [MQTTMessage] = []
        if options.homeAssistantDiscovery, batteryDiscovered.insert(identity).inserted {
            messages.append(discovery.batteryMessage(for: identity))
        }
        var body: [String: Any] = ["voltage": Double(telemetry.batteryMillivolts) / 1000, "millivolts": Int(telemetry.batteryMillivolts), "time": time]
        if let temperature = telemetry.temperatureCelsius { body["temperature"] = temperature }
        messages.append(MQTTMessage(topic: topics.beaconBattery(identity), payload: HomeAssistantDiscovery.json(body), qos: .atLeastOnce, retain: true))
        return messages
    }

    public mutating func messages(for event: BeaconEvent) -> [MQTTMessage] {
        switch event {
        case .didEnter(let region, _):
            return [eventMessage(event), MQTTMessage(topic: topics.regionState(region), text: "inside", qos: .atLeastOnce, retain: true)]
        case .didExit(let region, _):
            return [eventMessage(event), MQTTMessage(topic: topics.regionState(region), text: "outside", qos: .atLeastOnce, retain: true)]
        case .didDetermineState(let state, let region, _):
            guard state != .unknown else { return [] }
            return [MQTTMessage(topic: topics.regionState(region), text: state.rawValue, qos: .atLeastOnce, retain: true)]
        case .didRange(let beacons, let region, let time):
            return rangingMessages(beacons, region: region, time: time)
        }
    }

    private func eventMessage(_ event: BeaconEvent) -> MQTTMessage {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(event)).map(Array.init) ?? []
        return MQTTMessage(topic: topics.events, payload: body, qos: .atLeastOnce)
    }

    private mutating func rangingMessages(_ beacons: [RangedBeacon], region: BeaconRegion, time: Double) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        var listed: Set<BeaconIdentity> = []
        for beacon in beacons {
            listed.insert(beacon.identity)
            // A beacon in several ranged regions is reported once per cycle.
            if let track = tracks[beacon.identity], track.lastRanged == time { continue }
            if tracks[beacon.identity] == nil {
                guard tracks.count < options.maximumBeacons else { continue }
                tracks[beacon.identity] = Track(firstSeen: time, packets: 0, lastRanged: time, lastDistance: nil, lastDistanceTime: time)
                if options.homeAssistantDiscovery && discovered.insert(beacon.identity).inserted {
                    messages += discovery.messages(for: beacon.identity)
                }
                messages.append(MQTTMessage(topic: topics.beaconState(beacon.identity), text: options.room, qos: .atLeastOnce, retain: true))
            }
            // iOS lists a beacon not heard this cycle with RSSI 0 (the strongest possible value)
            // and unknown accuracy: no reading is published rather than one that lies.
            if beacon.packetCount > 0 && beacon.rssi != 0 {
                messages.append(MQTTMessage(topic: topics.beaconRanging(beacon.identity), payload: rangingBody(beacon, time: time)))
            }
            let attributesBody = attributesBody(beacon)
            if attributes[beacon.identity] != attributesBody {
                attributes[beacon.identity] = attributesBody
                messages.append(MQTTMessage(topic: topics.beaconAttributes(beacon.identity), payload: attributesBody, qos: .atLeastOnce, retain: true))
            }
            if options.espresense, let report = espresenseMessage(beacon, time: time) { messages.append(report) }
            tracks[beacon.identity]!.lastRanged = time
            tracks[beacon.identity]!.packets += beacon.packetCount
        }
        // A beacon of this region missing from its list has been silent past the tracking age.
        for identity in tracks.keys where region.contains(identity) && !listed.contains(identity) {
            tracks[identity] = nil
            if let address = addresses.removeValue(forKey: identity), identities[address] == identity { identities[address] = nil }
            batteries[identity] = nil
            attributes[identity] = nil
            messages.append(MQTTMessage(topic: topics.beaconState(identity), text: "not_home", qos: .atLeastOnce, retain: true))
        }
        return messages
    }

    /// The tracker's attributes; `proximity` is unknown in a cycle the beacon was not heard,
    /// and such a cycle keeps the zone last heard rather than flapping to unknown.
    private func attributesBody(_ beacon: RangedBeacon) -> [UInt8] {
        var body: [String: Any] = [
            "uuid": beacon.identity.uuid.uuidString,
            "major": Int(beacon.identity.major),
            "minor": Int(beacon.identity.minor),
            "room": options.room,
            "gateway": topics.gateway,
        ]
        if beacon.proximity != .unknown {
            body["proximity"] = beacon.proximity.description
        } else if let last = attributes[beacon.identity],
                  let previous = try? JSONSerialization.jsonObject(with: Data(last)) as? [String: Any], let zone = previous["proximity"] {
            body["proximity"] = zone
        }
        return HomeAssistantDiscovery.json(body)
    }

    private func rangingBody(_ beacon: RangedBeacon, time: Double) -> [UInt8] {
        var body: [String: Any] = [
            "uuid": beacon.identity.uuid.uuidString,
            "major": Int(beacon.identity.major),
            "minor": Int(beacon.identity.minor),
            "proximity": beacon.proximity.description,
            "rssi": beacon.rssi,
            "measuredPower": Int(beacon.measuredPower.dBm),
            "packets": beacon.packetCount,
            "time": time,
            "room": options.room,
        ]
        // Unknown distance is null rather than −1, so Home Assistant shows "unknown", not a length.
        body["distance"] = beacon.accuracy >= 0 ? Self.rounded(beacon.accuracy) : NSNull()
        return HomeAssistantDiscovery.json(body)
    }

    /// ESPresense's device report (fields read from ESPresense's BleFingerprint::fill, see
    /// docs/mqtt.md): only for cycles in which the beacon was heard, as a node reports only
    /// what it hears.
    private mutating func espresenseMessage(_ beacon: RangedBeacon, time: Double) -> MQTTMessage? {
        guard beacon.packetCount > 0, beacon.rssi != 0, beacon.accuracy >= 0, var track = tracks[beacon.identity] else { return nil }
        let exponent = options.pathLossExponent
        let raw = pow(10, Double(Int(beacon.measuredPower.dBm) - beacon.rssi) / (10 * exponent))
        var speed = 0.0
        if let last = track.lastDistance, time > track.lastDistanceTime {
            speed = (beacon.accuracy - last) / (time - track.lastDistanceTime)
        }
        track.lastDistance = beacon.accuracy
        track.lastDistanceTime = time
        let packets = track.packets + beacon.packetCount
        let interval = packets > 0 ? Int(((time - track.firstSeen) * 1000 / Double(packets)).rounded()) : 0
        tracks[beacon.identity] = track
        var body: [String: Any] = [
            "id": "iBeacon:\(beacon.identity.uuid.uuidString.lowercased())-\(beacon.identity.major)-\(beacon.identity.minor)",
            "idType": 180,
            "rssi@1m": Int(beacon.measuredPower.dBm),
            "rssi": beacon.rssi,
            "raw": Self.rounded(raw),
            "distance": Self.rounded(beacon.accuracy),
            "speed": Self.rounded(speed),
            "interval": interval,
        ]
        if let address = addresses[beacon.identity] {
            body["mac"] = address.description.replacingOccurrences(of: ":", with: "").lowercased()
        }
        let id = body["id"] as! String
        return MQTTMessage(topic: "\(options.espresenseRoot)/devices/\(id)/\(topics.gateway)", payload: HomeAssistantDiscovery.json(body))
    }

    /// Two decimals, as ESPresense prints distances.
    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
