import Foundation

/// room-assistant (2.x, Bluetooth Low Energy integration): one instance per room; the room is
/// the instance with the shortest distance among those updated within the timeout.
///
/// The rule, as room-assistant 2.20 documents and ships it (defaults in brackets):
/// - **Per instance**, every packet's RSSI goes through a one-dimensional Kalman filter
///   (constant state; process noise [kalmanProcessNoise 0.008], measurement noise
///   [kalmanMeasurementNoise 4]; the first packet sets the state). Distance from the filtered
///   RSSI and the iBeacon's measured power with the ratio formula room-assistant uses
///   (`r = rssi / measuredPower`: `r^10` below 1, else `0.89976 · r^7.7095 + 0.111`), rounded
///   to 0.1 m; no throttling [updateFrequency 0], no distance limit [maxDistance unset].
/// - **Room**: on every distance from any instance, the nearest instance whose last distance is
///   younger than the timeout [timeout 60 s]; checked again every timeout period, and "not
///   home" when no instance is that recent.
public struct RoomAssistantRoomDecider: PacketRoomDecider {
    public struct Configuration: Sendable, Hashable {
        public var processNoise = 0.008
        public var measurementNoise = 4.0
        public var timeout = 60.0
        public var maxDistance: Double?

        public init() {}
    }

    struct Kalman: Sendable {
        var state: Double
        var covariance: Double
    }

    struct Instance: Sendable {
        var filter: Kalman
        var distance: Double
        var updated: Double
        var outOfRange: Bool
    }

    struct Subject: Sendable {
        var instances: [String: Instance] = [:]
        var room: String?
        var nextCheck: Double
    }

    public let configuration: Configuration
    public let receiverRooms: [String: String]
    private var subjects: [String: Subject] = [:]

    public init(receiverRooms: [String: String], configuration: Configuration = Configuration()) {
        self.receiverRooms = receiverRooms
        self.configuration = configuration
    }

    public func room(of subject: String) -> String? { subjects[subject]?.room }

    public mutating func observe(subject name: String, receiver: String, rssi: Double, measuredPower: Double, at time: Double) -> [RoomEvent] {
        guard receiverRooms[receiver] != nil, rssi.isFinite, measuredPower < 0, time.isFinite else { return [] }
        var events = advance(to: time)
        if subjects[name] == nil && subjects.count >= RoomPresence.maximumSubjects { return events }
        var subject = subjects[name] ?? Subject(nextCheck: time + max(configuration.timeout, 1))
        var filter = subject.instances[receiver]?.filter ?? Kalman(state: rssi, covariance: configuration.measurementNoise)
        if subject.instances[receiver] != nil {
            let predicted = filter.covariance + configuration.processNoise
            let gain = predicted / (predicted + configuration.measurementNoise)
            filter.state += gain * (rssi - filter.state)
            filter.covariance = predicted - gain * predicted
        }
        let distance = Self.distance(rssi: filter.state, measuredPower: measuredPower)
        subject.instances[receiver] = Instance(filter: filter, distance: distance, updated: time,
                                               outOfRange: configuration.maxDistance.map { distance > $0 } ?? false)
        events += decide(&subject, name: name, at: time)
        subjects[name] = subject
        return events
    }

    /// The periodic check (every `timeout` from the sensor's creation) that drops instances
    /// not heard within the timeout, and sends the subject "not home" when none is left.
    public mutating func advance(to time: Double) -> [RoomEvent] {
        guard configuration.timeout > 0 else { return [] }
        var events: [RoomEvent] = []
        for name in subjects.keys.sorted() {
            guard var subject = subjects[name], subject.nextCheck <= time else { continue }
            while subject.nextCheck <= time {
                events += decide(&subject, name: name, at: subject.nextCheck)
                subject.nextCheck += configuration.timeout
                // Once every distance is stale, later checks change nothing: jump to the last one.
                let lastHeard = subject.instances.values.map(\.updated).max() ?? -.infinity
                if subject.room == nil, subject.nextCheck > lastHeard + configuration.timeout, time - subject.nextCheck > configuration.timeout {
                    subject.nextCheck += ((time - subject.nextCheck) / configuration.timeout).rounded(.down) * configuration.timeout
                }
            }
            subjects[name] = subject
        }
        return events
    }

    private func decide(_ subject: inout Subject, name: String, at time: Double) -> [RoomEvent] {
        let nearest = subject.instances.filter { !$0.value.outOfRange && (configuration.timeout <= 0 || time < $0.value.updated + configuration.timeout) }
            .min { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }
        let room = nearest.flatMap { receiverRooms[$0.key] }
        let events = RoomEvent.change(subject: name, from: subject.room, to: room, at: time)
        subject.room = room
        return events
    }

    /// room-assistant's distance from a level and the beacon's measured power, rounded to 0.1 m.
    static func distance(rssi: Double, measuredPower: Double) -> Double {
        let ratio = rssi / measuredPower
        let metres = ratio < 1 ? pow(ratio, 10) : 0.89976 * pow(ratio, 7.7095) + 0.111
        return (metres * 10).rounded() / 10
    }
}
