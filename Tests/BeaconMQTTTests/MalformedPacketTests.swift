import BeaconMQTT
import Testing

/// Each malformed packet is refused with the field at fault and the byte offset where it is.
@Suite("MQTT malformed input")
struct MalformedPacketTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var field: String
        var offset: Int
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "five length bytes", bytes: [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], field: "remaining length", offset: 5),
        Case(name: "reserved type 0", bytes: [0x00, 0x00], field: "packet type", offset: 0),
        Case(name: "QoS 2 PUBREC", bytes: [0x50, 0x02, 0x00, 0x01], field: "packet type", offset: 0),
        Case(name: "PINGREQ with flags", bytes: [0xC1, 0x00], field: "fixed header flags", offset: 0),
        Case(name: "PINGRESP with a body", bytes: [0xD0, 0x01, 0x00], field: "remaining length", offset: 1),
        Case(name: "SUBSCRIBE without 0010 flags", bytes: [0x80, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00], field: "fixed header flags", offset: 0),
        Case(name: "PUBLISH QoS 3", bytes: [0x36, 0x03, 0x00, 0x01, 0x61], field: "fixed header QoS", offset: 0),
        Case(name: "PUBLISH QoS 2", bytes: [0x34, 0x05, 0x00, 0x01, 0x61, 0x00, 0x01], field: "fixed header QoS", offset: 0),
        Case(name: "PUBLISH QoS 0 with DUP", bytes: [0x38, 0x03, 0x00, 0x01, 0x61], field: "fixed header DUP flag", offset: 0),
        Case(name: "topic longer than the packet", bytes: [0x30, 0x03, 0x00, 0x05, 0x61], field: "topic name", offset: 2),
        Case(name: "topic with a wildcard", bytes: [0x30, 0x04, 0x00, 0x02, 0x61, 0x23], field: "topic name", offset: 2),
        Case(name: "topic not UTF-8", bytes: [0x30, 0x04, 0x00, 0x02, 0xC3, 0x28], field: "topic name", offset: 2),
        Case(name: "topic with NUL", bytes: [0x30, 0x04, 0x00, 0x02, 0x61, 0x00], field: "topic name", offset: 2),
        Case(name: "QoS 1 without identifier", bytes: [0x32, 0x04, 0x00, 0x01, 0x61, 0x00], field: "packet identifier", offset: 5),
        Case(name: "QoS 1 identifier 0", bytes: [0x32, 0x05, 0x00, 0x01, 0x61, 0x00, 0x00], field: "packet identifier", offset: 5),
        Case(name: "PUBACK too long", bytes: [0x40, 0x03, 0x00, 0x01, 0x00], field: "remaining length", offset: 1),
        Case(name: "CONNACK return code 6", bytes: [0x20, 0x02, 0x00, 0x06], field: "return code", offset: 3),
        Case(name: "CONNACK reserved flag bits", bytes: [0x20, 0x02, 0x02, 0x00], field: "connect acknowledge flags", offset: 2),
        Case(name: "SUBACK bad code", bytes: [0x90, 0x03, 0x00, 0x01, 0x03], field: "return code", offset: 4),
        Case(name: "SUBACK without codes", bytes: [0x90, 0x02, 0x00, 0x01], field: "return codes", offset: 4),
        Case(name: "SUBSCRIBE QoS 3", bytes: [0x82, 0x06, 0x00, 0x01, 0x00, 0x01, 0x61, 0x03], field: "requested QoS", offset: 7),
        Case(name: "CONNECT protocol MQIsdp", bytes: [0x10, 0x0C, 0x00, 0x06, 0x4D, 0x51, 0x49, 0x73, 0x64, 0x70, 0x03, 0x02, 0x00, 0x00], field: "protocol name", offset: 2),
        Case(name: "CONNECT level 5", bytes: [0x10, 0x0C, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x05, 0x02, 0x00, 0x3C, 0x00, 0x00], field: "protocol level", offset: 8),
        Case(name: "CONNECT reserved flag", bytes: [0x10, 0x0C, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x03, 0x00, 0x3C, 0x00, 0x00], field: "connect flags", offset: 9),
        Case(name: "CONNECT password without user", bytes: [0x10, 0x0C, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x42, 0x00, 0x3C, 0x00, 0x00], field: "connect flags", offset: 9),
        Case(name: "CONNECT trailing bytes", bytes: [0x10, 0x0D, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C, 0x00, 0x00, 0xFF], field: "payload", offset: 14),
    ]

    @Test("refusal names field and offset", arguments: cases)
    func refusal(_ testCase: Case) {
        do {
            let decoded = try MQTTPacketDecoder().decode(testCase.bytes)
            Issue.record("decoded \(String(describing: decoded)) from \(testCase.name)")
        } catch {
            #expect(error.field == testCase.field, "\(error)")
            #expect(error.offset == testCase.offset, "\(error)")
            #expect(error.description.contains(testCase.field) && error.description.contains("byte \(testCase.offset)"))
        }
    }

    @Test("a packet above the size limit is refused from its header alone, before its body arrives")
    func sizeLimit() {
        let decoder = MQTTPacketDecoder(maximumPacketSize: 1024)
        // Header announcing 2 MB (0x80 0x80 0x80 0x01 = 2,097,152) and nothing else.
        let error = #expect(throws: MQTTDecodeError.self) { try decoder.decode([0x30, 0x80, 0x80, 0x80, 0x01]) }
        #expect(error?.field == "remaining length" && error?.offset == 1 && error?.found == "2097152")
        // Exactly at the limit is fine (incomplete here, so nil).
        let atLimit = Result { () throws(MQTTDecodeError) in try decoder.decode([0x30, 0x80, 0x08]) }
        #expect(atLimit.map { $0 == nil } == .success(true))
    }

    @Test("random bytes never crash the decoder and every error's offset lies inside the bytes")
    func randomBytes() {
        var generator = SystemRandomNumberGenerator()
        let decoder = MQTTPacketDecoder(maximumPacketSize: 4096)
        var refused = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count > 1 { bytes[1] = UInt8(count - 2) & 0x7F }  // plausible lengths reach the body checks
            do {
                _ = try decoder.decode(bytes)
            } catch {
                refused += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error)")
            }
        }
        #expect(refused > 0)
    }
}
