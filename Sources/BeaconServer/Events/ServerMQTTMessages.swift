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
    private var discovered: [String: RoomOccurrence.Subject] = [:]

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

    /// Where Home Assistant announces itself; `online` there asks for discovery again.
    public var homeAssistantStatusTopic: String { "\(options.discoveryPrefix)/status" }

    /// The discovery configs and room states this server stands behind, again: after a
    /// reconnect (a restarted broker may have lost them) and when Home Assistant announces itself.
    public func republished() -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        for (name, subject) in discovered.sorted(by: { $0.key < $1.key }) {
            if options.homeAssistantDiscovery { messages.append(trackerConfig(subject)) }
            messages.append(MQTTMessage(topic: roomTopic(name), text: rooms[name] ?? "not_home", qos: .atLeastOnce, retain: true))
        }
        for (name, room) in rooms.sorted(by: { $0.key < $1.key }) where discovered[name] == nil {
            messages.append(MQTTMessage(topic: roomTopic(name), text: room, qos: .atLeastOnce, retain: true))
        }
        return messages
    }

    /// The messages of one stored batch, in order. A room change is stored as the old room's
    /// exit and the new room's enter in one batch: the exit then publishes nothing, so the
    /// tracker goes straight to the new room and only a real departure reads `not_home`.
    public mutating func messages(for batch: [StoredEvent]) -> [MQTTMessage] {
        var enteredLater: Set<String> = []
        var movesOn = [Bool](repeating: false, count: batch.count)
        for index in batch.indices.reversed() {
            guard case .room(let room) = batch[index].occurrence else { continue }
            switch room.kind {
            case .roomEnter: enteredLater.insert(room.subject.name)
            case .roomExit: movesOn[index] = enteredLater.contains(room.subject.name)
            }
        }
        return batch.indices.flatMap { messages(for: batch[$0], movingOn: movesOn[$0]) }
    }

    public mutating func messages(for event: StoredEvent) -> [MQTTMessage] {
        messages(for: event, movingOn: false)
    }

    /// `movingOn`: an exit the subject's enter of another room follows in the same batch.
    private mutating func messages(for event: StoredEvent, movingOn: Bool) -> [MQTTMessage] {
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
            messages += roomMessages(room, movingOn: movingOn)
        case .fleet(let fleet):
            let state: [String: Any] = ["level": fleet.level.rawValue, "check": fleet.check.rawValue, "reason": fleet.reason,
                                        "alertID": fleet.alertID, "time": fleet.time]
            messages.append(MQTTMessage(topic: fleetTopic(kind: fleet.subject.kind, name: fleet.subject.name),
                                        payload: HomeAssistantDiscovery.json(state), qos: .atLeastOnce, retain: true))
        case .application:
            // Only on the events topic: a check-in or an offer is a moment, not a state to retain.
            break
        }
        return messages
    }

    /// A subject's room topic carries the room it is in, or `not_home` once it left its last
    /// room. An exit from a room it already left (the enter of the next room came first) does
    /// not overwrite the newer room.
    private mutating func roomMessages(_ room: RoomOccurrence, movingOn: Bool) -> [MQTTMessage] {
        let subject = room.subject.name
        var messages: [MQTTMessage] = []
        switch room.kind {
        case .roomEnter:
            if rooms[subject] != nil || rooms.count < options.maximumSubjects {
                rooms[subject] = room.room
                if discovered[subject] == nil, discovered.count < options.maximumSubjects {
                    discovered[subject] = room.subject
                    if options.homeAssistantDiscovery { messages.append(trackerConfig(room.subject)) }
                }
            }
            messages.append(MQTTMessage(topic: roomTopic(subject), text: room.room, qos: .atLeastOnce, retain: true))
        case .roomExit:
            guard rooms[subject] == nil || rooms[subject] == room.room else { return [] }
            rooms[subject] = nil
            if !movingOn { messages.append(MQTTMessage(topic: roomTopic(subject), text: "not_home", qos: .atLeastOnce, retain: true)) }
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
                // Not the gateways' device name for the same beacon ("iBeacon 1.2"): two devices in
                // Home Assistant's list must be told apart.
                "name": subject.kind == "beacon" ? "iBeacon \(subject.major.map(String.init) ?? "?").\(subject.minor.map(String.init) ?? "?") room" : subject.name,
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
