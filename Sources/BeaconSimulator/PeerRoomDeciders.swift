import BeaconLocate

/// The room rules of the systems people run today (issue 10: ESPresense with Home Assistant's
/// `mqtt_room`, Bermuda, room-assistant), with their shipped defaults, run by the location
/// evaluation beside Proxima's deciders on the same packets. They decide tags only: each tracks
/// beacons heard by fixed receivers (one per room), so the gateways with a room are their nodes.
struct PeerRoomDeciders {
    static let espresense = "ESPresense + mqtt_room (peer)"
    static let bermuda = "Bermuda (peer)"
    static let roomAssistant = "room-assistant (peer)"
    static let labels = [espresense, bermuda, roomAssistant]

    private var deciders: [(label: String, decider: any PacketRoomDecider)]

    /// `receiverRooms`: each gateway's room (gateways with none are not nodes).
    init(receiverRooms: [String: String]) {
        deciders = [(Self.espresense, ESPresenseRoomDecider(receiverRooms: receiverRooms)),
                    (Self.bermuda, BermudaRoomDecider(receiverRooms: receiverRooms)),
                    (Self.roomAssistant, RoomAssistantRoomDecider(receiverRooms: receiverRooms))]
    }

    mutating func observe(subject: String, receiver: String, rssi: Double, measuredPower: Double, at time: Double) -> [(label: String, events: [RoomEvent])] {
        deciders.indices.map { index in
            (deciders[index].label, deciders[index].decider.observe(subject: subject, receiver: receiver, rssi: rssi, measuredPower: measuredPower, at: time))
        }
    }

    mutating func advance(to time: Double) -> [(label: String, events: [RoomEvent])] {
        deciders.indices.map { index in (deciders[index].label, deciders[index].decider.advance(to: time)) }
    }
}
