import BeaconKit
import BeaconMQTT
import Foundation

/// What `proxima serve --mqtt` publishes for the events it stores (docs/mqtt.md, "From the
/// server"): every event as JSON, each gateway's region states in the layout a gateway's own
/// `--mqtt` uses, each tracked subject's room (the site-wide room presence a single gateway
/// cannot decide) with a Home Assistant device tracker, and each fleet alert's current level.
/// A pure state machine fed events in order; it remembers only which subjects are in which
/// room and which were announced to Home Assistant, bounded by `maximumSubjects`.
public struct ServerMQTTMessages: Sendable {
    public struct Options: Sendable, Hashable {
        public var prefix = "proxima"
        public var instance = "server"
        public var homeAssistantDiscovery = true
        public var discoveryPrefix = "homeassistant"
        /// Subjects whose room is remembered at once; beyond this a new subject gets its room
        /// topic but no discovery config until the table has room (a flood stays bounded).
        public var maximumSubjects = 10_000

        public init() {}
    }

    public let options: Options
    private var rooms: [String: String] = [:]
    private var discovered: Set<String> = []

    public init(options: Options) {
        self.options = options
    }

    public var statusTopic: String { "\(options.prefix)/server/\(BeaconTopics.topicLevel(options.instance))/status" }
    public var eventsTopic: String { "\(options.prefix)/server/events" }
    public func roomTopic(_ subject: String) -> String { "\(options.prefix)/rooms/\(BeaconTopics.topicLevel(subject))/state" }
    public func fleetTopic(kind: String, name: String) -> String {
        "\(options.prefix)/fleet/\(BeaconTopics.topicLevel(kind))/\(BeaconTopics.topicLevel(name))/state"
    }
    public func trackerConfigTopic(_ subject: String) -> String {
        "\(options.discoveryPrefix)/device_tracker/proxima_room_\(BeaconTopics.topicLevel(subject))/config"
    }

    public var will: MQTTMessage { MQTTMessage(topic: statusTopic, text: "offline", qos: .atLeastOnce, retain: true) }
    public var online: MQTTMessage { MQTTMessage(topic: statusTopic, text: "online", qos: .atLeastOnce, retain: true) }

    public var rememberedSubjects: Int { rooms.count }

    public mutating func messages(for event: StoredEvent) -> [MQTTMessage] {
        var messages = [MQTTMessage(topic: eventsTopic, payload: Array((try? Self.encoder.encode(event)) ?? Data()), qos: .atLeastOnce)]
        switch event.occurrence {
        case .region(let regionEvent):
            let topics = BeaconTopics(prefix: options.prefix, gateway: event.gatewayID)
            switch regionEvent {
            case .didEnter(let region, _):
                messages.append(MQTTMessage(topic: topics.regionState(region), text: "inside", qos: .atLeastOnce, retain: true))
            case .didExit(let region, _):
                messages.append(MQTTMessage(topic: topics.regionState(region), text: "outside", qos: .atLeastOnce, retain: true))
            case .didDetermineState, .didRange:
                break
            }
        case .room(let room):
            messages += roomMessages(room)
        case .fleet(let fleet):
            let state: [String: Any] = ["level": fleet.level.rawValue, "check": fleet.check.rawValue, "reason": fleet.reason,
                                        "alertID": fleet.alertID, "time": fleet.time]
            messages.append(MQTTMessage(topic: fleetTopic(kind: fleet.subject.kind, name: fleet.subject.name),
                                        payload: HomeAssistantDiscovery.json(state), qos: .atLeastOnce, retain: true))
        }
        return messages
    }

    /// A subject's room topic carries the room it is in, or `not_home` once it left its last
    /// room. An exit from a room it already left (the enter of the next room came first) does
    /// not overwrite the newer room.
    private mutating func roomMessages(_ room: RoomOccurrence) -> [MQTTMessage] {
        let subject = room.subject.name
        var messages: [MQTTMessage] = []
        switch room.kind {
        case .roomEnter:
            if rooms[subject] != nil || rooms.count < options.maximumSubjects {
                rooms[subject] = room.room
                if options.homeAssistantDiscovery, discovered.count < options.maximumSubjects, discovered.insert(subject).inserted {
                    messages.append(trackerConfig(room.subject))
                }
            }
            messages.append(MQTTMessage(topic: roomTopic(subject), text: room.room, qos: .atLeastOnce, retain: true))
        case .roomExit:
            guard rooms[subject] == nil || rooms[subject] == room.room else { return [] }
            rooms[subject] = nil
            messages.append(MQTTMessage(topic: roomTopic(subject), text: "not_home", qos: .atLeastOnce, retain: true))
        }
        return messages
    }

    /// A Home Assistant device tracker whose state is the room's name (Home Assistant shows a
    /// state other than home and not_home as that place), available while the server is.
    private func trackerConfig(_ subject: RoomOccurrence.Subject) -> MQTTMessage {
        let level = BeaconTopics.topicLevel(subject.name)
        let config: [String: Any] = [
            "name": "room",
            "unique_id": "proxima_room_\(level)",
            "state_topic": roomTopic(subject.name),
            "payload_home": "home",
            "payload_not_home": "not_home",
            "source_type": "bluetooth_le",
            "availability_topic": statusTopic,
            "payload_available": "online",
            "payload_not_available": "offline",
            "device": [
                "identifiers": ["proxima_subject_\(level)"],
                "name": subject.kind == "beacon" ? "iBeacon \(subject.major.map(String.init) ?? "?").\(subject.minor.map(String.init) ?? "?")" : subject.name,
                "model": subject.kind == "beacon" ? "iBeacon \(subject.uuid?.uuidString ?? "")" : "phone",
                "manufacturer": "Proxima",
            ] as [String: Any],
        ]
        return MQTTMessage(topic: trackerConfigTopic(subject.name), payload: HomeAssistantDiscovery.json(config), qos: .atLeastOnce, retain: true)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
