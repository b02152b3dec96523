import Foundation

/// ESPresense as most people run it for rooms: an ESPresense node per room publishing each
/// beacon's distance over MQTT, and Home Assistant's `mqtt_room` sensor naming the room.
///
/// The rule, as ESPresense 4.0 documents and ships it (defaults in brackets):
/// - **Node filter.** Each node keeps the beacon's RSSI readings of the last 15 s (in a buffer
///   of 20 readings at first, resized every 10 s to 1.5 × the readings a 15 s window holds at
///   the rate heard, between 10 and 200) and takes the mean of those inside the Tukey fences
///   (1.5 × the interquartile range). Distance = `10^((rssi@1m − rssi) / (10 · absorption))`,
///   rssi@1m being the iBeacon's measured power [absorption 2.7].
/// - **Reports.** A node reports a beacon it has heard since its last report at most once per
///   5 s slot [skip_ms 5000], earlier only when the distance moved by ≥ 0.5 m [skip_dist]
///   (up to half a slot early for large moves, [max_divisor 10]), and never beyond 16 m
///   [max_distance].
/// - **Room.** `mqtt_room` takes a report when it is from the current room, or nearer than the
///   current distance, or the current one is at least 5 s old [timeout 5]; it never reports
///   "away" unless `away_timeout` is set [0, off].
///
/// The companion's trilateration mode is not modelled here: Proxima's own position-based
/// deciders are that design's counterpart.
public struct ESPresenseRoomDecider: PacketRoomDecider {
    public struct Configuration: Sendable, Hashable {
        public var absorption = 2.7
        public var maxDistance = 16.0
        public var skipDistance = 0.5
        public var reportInterval = 5.0
        public var maxDivisor = 10.0
        public var filterWindow = 15.0
        public var initialReadings = 20
        public var rateCheckInterval = 10.0
        public var readingBounds = 10...200
        public var fence = 1.5
        /// `mqtt_room`'s `timeout`, seconds.
        public var roomTimeout = 5.0
        /// `mqtt_room`'s `away_timeout`, seconds; 0 never reports away.
        public var awayTimeout = 0.0

        public init() {}
    }

    /// One node's view of one beacon.
    struct Node: Sendable {
        var readings: [(time: Double, rssi: Double)] = []
        var capacity: Int
        var lastRateCheck = -Double.infinity
        var distance = Double.infinity
        var lastReported: Double?
        var nextReport = -Double.infinity
        /// Heard since the last report.
        var pending = false
        var lastHeard = 0.0
    }

    struct Subject: Sendable {
        var nodes: [String: Node] = [:]
        var room: String?
        var distance: Double?
        var updated: Double?
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
        guard receiverRooms[receiver] != nil, rssi.isFinite, measuredPower.isFinite, time.isFinite else { return [] }
        if subjects[name] == nil && subjects.count >= RoomPresence.maximumSubjects { return [] }
        var subject = subjects[name] ?? Subject()
        var events = flushReports(&subject, name: name, until: time)
        var node = subject.nodes[receiver] ?? Node(capacity: configuration.initialReadings)
        add(rssi, at: time, to: &node)
        node.distance = logDistance(rssi: filtered(node), reference: measuredPower, exponent: configuration.absorption)
        node.pending = true
        node.lastHeard = time
        subject.nodes[receiver] = node
        events += flushReports(&subject, name: name, until: time)
        subjects[name] = subject
        return events
    }

    public mutating func advance(to time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        for name in subjects.keys.sorted() {
            guard var subject = subjects[name] else { continue }
            events += flushReports(&subject, name: name, until: time)
            if configuration.awayTimeout > 0, let updated = subject.updated, time - updated > configuration.awayTimeout, subject.room != nil {
                events += RoomEvent.change(subject: name, from: subject.room, to: nil, at: time)
                subject.room = nil
            }
            subjects[name] = subject
        }
        return events
    }

    /// The reports the subject's nodes send up to `time`, in time order, each passed to the
    /// room sensor.
    private func flushReports(_ subject: inout Subject, name: String, until time: Double) -> [RoomEvent] {
        var events: [RoomEvent] = []
        while true {
            let due = subject.nodes.compactMap { receiver, node -> (String, Double)? in
                guard let at = reportTime(of: node), at <= time else { return nil }
                return (receiver, at)
            }.min { ($0.1, $0.0) < ($1.1, $1.0) }
            guard let (receiver, at) = due, var node = subject.nodes[receiver] else { return events }
            node.pending = false
            node.lastReported = node.distance
            // The next slot boundary (the node's loop reports a few milliseconds after one, so
            // the one it reports at is behind it).
            node.nextReport = ((at / configuration.reportInterval).rounded(.down) + 1) * configuration.reportInterval
            subject.nodes[receiver] = node
            events += sensorReceives(&subject, name: name, room: receiverRooms[receiver]!, distance: node.distance, at: at)
        }
    }

    /// When the node's pending report goes out (nil: not while the distance stays as it is).
    private func reportTime(of node: Node) -> Double? {
        guard node.pending, node.distance.isFinite else { return nil }
        if configuration.maxDistance > 0 && node.distance > configuration.maxDistance { return nil }
        guard node.lastHeard < node.nextReport else { return node.lastHeard }
        let movement = abs(node.distance - (node.lastReported ?? .infinity))
        guard configuration.skipDistance > 0, movement >= configuration.skipDistance else { return node.nextReport }
        let steps = log2((pow(2, min(movement / configuration.skipDistance, 60))).rounded()).rounded(.towardZero)
        let divisor = max(2, min(configuration.maxDivisor, configuration.maxDivisor - steps))
        return max(node.lastHeard, node.nextReport - configuration.reportInterval / divisor)
    }

    /// `mqtt_room`'s rule for one report.
    private func sensorReceives(_ subject: inout Subject, name: String, room: String, distance: Double, at time: Double) -> [RoomEvent] {
        if let current = subject.distance, let updated = subject.updated,
           !(room == subject.room || distance < current || time - updated >= configuration.roomTimeout) {
            return []
        }
        let events = RoomEvent.change(subject: name, from: subject.room, to: room, at: time)
        subject.room = room
        subject.distance = distance
        subject.updated = time
        return events
    }

    private func add(_ rssi: Double, at time: Double, to node: inout Node) {
        node.readings.append((time, rssi))
        if node.readings.count > node.capacity { node.readings.removeFirst(node.readings.count - node.capacity) }
        node.readings.removeAll { time - $0.time > configuration.filterWindow }
        guard time - node.lastRateCheck > configuration.rateCheckInterval else { return }
        node.lastRateCheck = time
        guard let oldest = node.readings.first, time > oldest.time else { return }
        let rate = Double(node.readings.count) / (time - oldest.time)
        let ideal = min(configuration.readingBounds.upperBound,
                        max(configuration.readingBounds.lowerBound, Int((rate * configuration.filterWindow).rounded(.up) * 1.5)))
        if abs(ideal - node.capacity) > node.capacity / 4 {
            node.capacity = ideal
            if node.readings.count > ideal { node.readings.removeFirst(node.readings.count - ideal) }
        }
    }

    /// Mean of the readings inside the Tukey fences (the median if none is).
    private func filtered(_ node: Node) -> Double {
        let values = node.readings.map(\.rssi).sorted()
        func quantile(_ p: Double) -> Double {
            let position = p * Double(values.count - 1)
            let low = Int(position)
            let fraction = position - Double(low)
            return low + 1 < values.count ? values[low] * (1 - fraction) + values[low + 1] * fraction : values[low]
        }
        let q1 = quantile(0.25), q3 = quantile(0.75)
        let lower = q1 - configuration.fence * (q3 - q1), upper = q3 + configuration.fence * (q3 - q1)
        let inside = values.filter { $0 >= lower && $0 <= upper }
        return inside.isEmpty ? quantile(0.5) : inside.reduce(0, +) / Double(inside.count)
    }
}
