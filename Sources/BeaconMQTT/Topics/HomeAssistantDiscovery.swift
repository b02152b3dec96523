import BeaconKit
import Foundation

/// Home Assistant MQTT discovery configs for one beacon as one gateway sees it: a
/// `device_tracker` (home / not_home, or the gateway's room) and `distance` and `rssi` sensors.
/// Keys follow https://www.home-assistant.io/integrations/device_tracker.mqtt/ and
/// https://www.home-assistant.io/integrations/sensor.mqtt/ (docs/mqtt.md quotes them); every
/// config is retained, so Home Assistant finds it after its own restart.
public struct HomeAssistantDiscovery: Sendable, Hashable {
    public var discoveryPrefix: String
    public var topics: BeaconTopics

    public init(topics: BeaconTopics, discoveryPrefix: String = "homeassistant") {
        self.topics = topics
        self.discoveryPrefix = discoveryPrefix
    }

    /// The entity id part shared by the three configs: gateway and beacon, so that each
    /// gateway's view of a beacon is its own entity on the beacon's one device.
    public func objectID(_ identity: BeaconIdentity) -> String {
        "proxima_\(topics.gateway)_\(BeaconTopics.beaconLevel(identity))"
    }

    public func trackerTopic(_ identity: BeaconIdentity) -> String { "\(discoveryPrefix)/device_tracker/\(objectID(identity))/config" }
    public func distanceTopic(_ identity: BeaconIdentity) -> String { "\(discoveryPrefix)/sensor/\(objectID(identity))_distance/config" }
    public func rssiTopic(_ identity: BeaconIdentity) -> String { "\(discoveryPrefix)/sensor/\(objectID(identity))_rssi/config" }

    /// The three retained config messages.
    public func messages(for identity: BeaconIdentity) -> [MQTTMessage] {
        let id = objectID(identity)
        let device: [String: Any] = [
            // One device per beacon, shared by every gateway that hears it.
            "identifiers": ["proxima_ibeacon_\(BeaconTopics.beaconLevel(identity))"],
            "name": "iBeacon \(identity.major).\(identity.minor)",
            "model": "iBeacon \(identity.uuid.uuidString)",
            "manufacturer": "Proxima",
        ]
        let availability: [String: Any] = [
            "availability_topic": topics.status,
            "payload_available": "online",
            "payload_not_available": "offline",
            "device": device,
        ]
        var tracker = availability
        tracker["name"] = "\(topics.gateway) presence"
        tracker["unique_id"] = id
        tracker["state_topic"] = topics.beaconState(identity)
        tracker["payload_home"] = "home"
        tracker["payload_not_home"] = "not_home"
        tracker["source_type"] = "bluetooth_le"
        tracker["json_attributes_topic"] = topics.beaconAttributes(identity)

        /// A measurement read from the ranging topic's JSON.
        func sensor(_ name: String, key: String, unit: String, deviceClass: String) -> [String: Any] {
            var sensor = availability
            sensor["name"] = "\(topics.gateway) \(name)"
            sensor["unique_id"] = "\(id)_\(key)"
            sensor["state_topic"] = topics.beaconRanging(identity)
            sensor["value_template"] = "{{ value_json.\(key) }}"
            sensor["unit_of_measurement"] = unit
            sensor["device_class"] = deviceClass
            sensor["state_class"] = "measurement"
            return sensor
        }
        let distance = sensor("distance", key: "distance", unit: "m", deviceClass: "distance")
        var rssi = sensor("RSSI", key: "rssi", unit: "dBm", deviceClass: "signal_strength")
        rssi["entity_category"] = "diagnostic"

        return [(trackerTopic(identity), tracker), (distanceTopic(identity), distance), (rssiTopic(identity), rssi)].map { topic, body in
            MQTTMessage(topic: topic, payload: Self.json(body), qos: .atLeastOnce, retain: true)
        }
    }

    /// Where Home Assistant announces itself: its birth message (`online`) asks every
    /// integration to send its discovery configs again.
    public var statusTopic: String { "\(discoveryPrefix)/status" }

    /// Whether `message` is Home Assistant saying it (re)started.
    public func isBirth(_ message: MQTTMessage) -> Bool { message.topic == statusTopic && message.text == "online" }

    public func batteryTopic(_ identity: BeaconIdentity) -> String { "\(discoveryPrefix)/sensor/\(objectID(identity))_battery/config" }

    /// A voltage sensor for a beacon whose Eddystone-TLM frames carry its battery (Home
    /// Assistant's `battery` class is a percentage, which TLM does not give).
    public func batteryMessage(for identity: BeaconIdentity) -> MQTTMessage {
        let config: [String: Any] = [
            "name": "\(topics.gateway) battery",
            "unique_id": "\(objectID(identity))_battery",
            "state_topic": topics.beaconBattery(identity),
            "value_template": "{{ value_json.voltage }}",
            "unit_of_measurement": "V",
            "device_class": "voltage",
            "state_class": "measurement",
            "entity_category": "diagnostic",
            "availability_topic": topics.status,
            "payload_available": "online",
            "payload_not_available": "offline",
            "device": ["identifiers": ["proxima_ibeacon_\(BeaconTopics.beaconLevel(identity))"]],
        ]
        return MQTTMessage(topic: batteryTopic(identity), payload: Self.json(config), qos: .atLeastOnce, retain: true)
    }

    /// JSON with sorted keys, for any retained payload built from a dictionary.
    public static func json(_ object: [String: Any]) -> [UInt8] {
        // Sorted keys make the retained payload identical from run to run, so a broker does not
        // see a change where there is none.
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}
