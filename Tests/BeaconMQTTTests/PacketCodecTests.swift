import BeaconMQTT
import Testing

@Suite("MQTT packet codec")
struct PacketCodecTests {
    static let packets: [MQTTPacket] = [
        .connect(MQTTConnect(clientIdentifier: "gateway-1", cleanSession: true, keepAlive: 30)),
        .connect(MQTTConnect(clientIdentifier: "g", cleanSession: false, keepAlive: 0, username: "user", password: Array("pa:ss".utf8),
                             will: MQTTMessage(topic: "proxima/g/status", text: "offline", qos: .atLeastOnce, retain: true))),
        .connAck(sessionPresent: true, returnCode: .accepted),
        .connAck(sessionPresent: false, returnCode: .notAuthorized),
        .publish(MQTTPublish(message: MQTTMessage(topic: "a/b", text: "hello"))),
        .publish(MQTTPublish(message: MQTTMessage(topic: "a/b", payload: [], qos: .atLeastOnce, retain: true), packetIdentifier: 7, duplicate: true)),
        .publish(MQTTPublish(message: MQTTMessage(topic: "big", payload: Array(repeating: 0xAB, count: 20_000), qos: .atLeastOnce), packetIdentifier: 65535)),
        .pubAck(packetIdentifier: 1),
        .subscribe(packetIdentifier: 2, filters: [("proxima/#", .atLeastOnce), ("homeassistant/+/+/config", .atMostOnce)]),
        .subAck(packetIdentifier: 2, returnCodes: [1, 0, 0x80]),
        .pingReq, .pingResp, .disconnect,
    ]

    @Test("every packet survives encoding and decoding, also when fed one byte at a time", arguments: packets)
    func roundTrip(_ packet: MQTTPacket) throws {
        let bytes = try packet.encoded()
        let decoder = MQTTPacketDecoder()
        let decoded = try #require(try decoder.decode(bytes))
        #expect(decoded.packet == packet)
        #expect(decoded.length == bytes.count)
        // Every proper prefix is incomplete, never an error or a packet.
        for cut in [0, 1, bytes.count / 2, bytes.count - 1] where cut < bytes.count {
            #expect(try decoder.decode(Array(bytes[..<cut])) == nil)
        }
        // Two packets back to back: the first is read and its length is exact.
        let twice = bytes + bytes
        #expect(try decoder.decode(twice)?.length == bytes.count)
    }

    /// Bytes from MQTT 3.1.1 itself: a PINGREQ is C0 00 (§3.12), a CONNACK accepting with a
    /// session 20 02 01 00 (§3.2), and a QoS 1 PUBLISH of "a/b" with id 10 and payload "x".
    @Test("known bytes")
    func knownBytes() throws {
        #expect(try MQTTPacket.pingReq.encoded() == [0xC0, 0x00])
        #expect(try MQTTPacket.disconnect.encoded() == [0xE0, 0x00])
        #expect(try MQTTPacketDecoder().decode([0x20, 0x02, 0x01, 0x00])?.packet == .connAck(sessionPresent: true, returnCode: .accepted))
        let publish = MQTTPacket.publish(MQTTPublish(message: MQTTMessage(topic: "a/b", text: "x", qos: .atLeastOnce), packetIdentifier: 10))
        #expect(try publish.encoded() == [0x32, 0x08, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x0A, 0x78])
        // CONNECT of client "c", clean session, keep alive 60: 10 0D 00 04 'MQTT' 04 02 00 3C 00 01 'c'.
        let connect = MQTTPacket.connect(MQTTConnect(clientIdentifier: "c", keepAlive: 60))
        #expect(try connect.encoded() == [0x10, 0x0D, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C, 0x00, 0x01, 0x63])
    }

    /// The remaining-length examples of §2.2.3 Table 2.4: the boundaries of 1 to 4 bytes.
    @Test("remaining length boundaries", arguments: [(0, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (2_097_151, 3), (2_097_152, 4)])
    func remainingLength(_ length: Int, _ lengthBytes: Int) throws {
        let topic = "t"
        let payloadCount = length - 3  // topic length (2) + "t" (1)
        guard payloadCount >= 0 else {
            #expect(try MQTTPacket.pingResp.encoded().count == 2)
            return
        }
        let packet = MQTTPacket.publish(MQTTPublish(message: MQTTMessage(topic: topic, payload: Array(repeating: 1, count: payloadCount))))
        let bytes = try packet.encoded()
        #expect(bytes.count == 1 + lengthBytes + length)
        let decoder = MQTTPacketDecoder(maximumPacketSize: 4_000_000)
        #expect(try decoder.decode(bytes)?.packet == packet)
    }

    @Test("the encoder refuses what the protocol forbids, naming the field")
    func encoderRefusals() {
        let refusals: [(MQTTPacket, String)] = [
            (.publish(MQTTPublish(message: MQTTMessage(topic: "a/#", text: ""))), "PUBLISH topic"),
            (.publish(MQTTPublish(message: MQTTMessage(topic: "a", text: "", qos: .atLeastOnce))), "PUBLISH packet identifier"),
            (.publish(MQTTPublish(message: MQTTMessage(topic: "a", text: ""), duplicate: true)), "PUBLISH DUP flag"),
            (.connect(MQTTConnect(clientIdentifier: "c", password: [1])), "CONNECT password"),
            (.connect(MQTTConnect(clientIdentifier: "c\u{0}")), "CONNECT client identifier"),
            (.subscribe(packetIdentifier: 1, filters: []), "SUBSCRIBE filters"),
        ]
        for (packet, field) in refusals {
            let error = #expect(throws: MQTTEncodeError.self) { try packet.encoded() }
            #expect(error?.field == field)
        }
    }
}
