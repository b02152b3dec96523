import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /v1/gateways/april-brother`: uploads of April Brother BLE gateways, with the real
/// frames of April Brother's "User Guide For AB BLE Gateway V4" (also in BeaconKit's
/// Fixtures/vectors.json, format aprilbrother_gateway_frame).
@Suite("April Brother gateways")
struct AprilBrotherIngestTests {
    /// adv type 00 | MAC 12 3B 6A 1A 64 CF | RSSI AA (-86) | iBeacon B5B182C7-…, major 1, minor 53092, power -59.
    static let defaultUUIDFrame = "00123b6a1a64cfaa0201061aff4c000215b5b182c7eab14988aa99b5c1517008d90001cf64c5"
    /// adv type 02 | MAC C8 FD 19 49 A5 30 | RSSI CE (-50) | iBeacon EB6D4696-…, major 13, minor 42, power -64.
    static let keyDeviceFrame = "02c8fd1949a530ce0201061aff4c000215eb6d469624be4663b15230d46b0e9cc9000d002ac0"
    /// adv type 00 | MAC | RSSI -70 | flags only: an advertisement with no beacon, as a gateway forwards it.
    static let flagsOnlyFrame = "00112233445566ba020106"

    static func bytes(_ hex: String) -> [UInt8] { try! Hex.bytes(hex) }

    /// The MessagePack map the firmware posts: {v, mid, time, ip, mac, devices: [bin…]}.
    static func messagePack(_ frames: [String], firmware: String = "1.5.15") -> [UInt8] {
        func text(_ string: String) -> [UInt8] { [0xA0 | UInt8(string.utf8.count)] + Array(string.utf8) }
        var body: [UInt8] = [0x86]                                           // map of 6
        body += text("v") + text(firmware)
        body += text("mid") + [0xCD, 0x01, 0x2C]                             // uint16 300
        body += text("time") + [0xCE, 0x00, 0x01, 0x51, 0x80]                // uint32 86,400 s since boot
        body += text("ip") + text("192.168.1.50")
        body += text("mac") + text("AABBCCDDEEFF")
        body += text("devices") + [0x90 | UInt8(frames.count)]              // fixarray
        for frame in frames {
            let raw = bytes(frame)
            body += [0xC4, UInt8(raw.count)] + raw                           // bin8
        }
        return body
    }

    // MARK: The MessagePack reader

    @Test func theReaderReadsEachType() throws {
        let value = try MessagePackReader.read([0x85, 0xA1, 0x61, 0xFF, 0xA1, 0x62, 0xCB, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0,
                                                0xA1, 0x63, 0x92, 0xC0, 0xC3, 0xA1, 0x64, 0xD1, 0xFF, 0x38, 0xA1, 0x65, 0xC4, 0x02, 0xAB, 0xCD])
        #expect(value["a"] == .int(-1))
        #expect(value["b"] == .double(1.5))
        #expect(value["c"] == .array([.null, .bool(true)]))
        #expect(value["d"] == .int(-200))
        #expect(value["e"] == .binary([0xAB, 0xCD]))
    }

    static let hostile: [[UInt8]] = [
        [0xDD, 0xFF, 0xFF, 0xFF, 0xFF, 0x00],          // an array claiming 4 billion elements
        [0xDF, 0xFF, 0xFF, 0xFF, 0xFF],                // a map claiming 4 billion pairs
        [0xC6, 0xFF, 0xFF, 0xFF, 0xFF, 0x00],          // 4 GB of binary
        [UInt8](repeating: 0x91, count: 1_000) + [0x00], // nesting 1,000 deep
        [0xC1],                                        // the unused type byte
        [0x92, 0x01],                                  // truncated
        [0xA2, 0xC3, 0x28],                            // a string that is not UTF-8
        [0x01, 0x02],                                  // trailing bytes
    ]

    @Test(arguments: hostile)
    func hostileInputIsRefusedWithinItsLength(bytes: [UInt8]) {
        #expect(throws: MessagePackReader.Failure.self) { try MessagePackReader.read(bytes) }
    }

    @Test func theValueCountIsBounded() {
        var reader = MessagePackReader([0xDC, 0x03, 0xE8] + [UInt8](repeating: 0x00, count: 1_000))
        reader.maxValues = 100
        #expect(throws: MessagePackReader.Failure.self) { try reader.value(depth: 0) }
    }

    // MARK: Uploads

    /// The same sightings as BeaconKit's gateway-frame codec (`proxima decode --format gateway`).
    @Test func anUploadGivesTheCodecsSightings() throws {
        let frames = [Self.defaultUUIDFrame, Self.keyDeviceFrame, Self.flagsOnlyFrame]
        let upload = try AprilBrotherUpload.decode(messagePack: Self.messagePack(frames), maxDevices: 100)
        #expect(upload.firmware == "1.5.15")
        #expect(upload.messageID == 300)
        #expect(upload.gatewayMAC == "AABBCCDDEEFF")
        let (sightings, skipped) = upload.sightings(receiver: "gw", time: 12)
        var expected: [Sighting] = []
        for frame in frames {
            for beacon in try InputDecoder.decode(Self.bytes(frame), format: .gateway).beacons {
                expected.append(Sighting(time: 12, receiver: "gw", address: beacon.address!, rssi: beacon.rssi, frame: beacon.frame))
            }
        }
        #expect(sightings == expected)
        #expect(skipped == 1)
        #expect(sightings.map(\.rssi) == [-86, -50])
        #expect(sightings.compactMap(\.frame.iBeacon).map(\.identity.minor) == [53092, 42])
    }

    @Test func theJSONFormsGiveTheSameFrames() throws {
        let json = """
            {"v":"1.5.15","mid":7,"time":86400,"ip":"192.168.1.50","mac":"AABBCCDDEEFF",
             "devices":["\(Self.keyDeviceFrame.uppercased())",
                        [0,"123B6A1A64CF",-86,"0201061AFF4C000215B5B182C7EAB14988AA99B5C1517008D90001CF64C5"]]}
            """
        let fromJSON = try AprilBrotherUpload.decode(json: Array(json.utf8), maxDevices: 100)
        let fromMessagePack = try AprilBrotherUpload.decode(messagePack: Self.messagePack([Self.keyDeviceFrame, Self.defaultUUIDFrame]), maxDevices: 100)
        #expect(fromJSON.frames == fromMessagePack.frames)
        #expect(fromJSON.messageID == 7)
    }

    // MARK: The route

    func headers(_ harness: RouterHarness, _ role: Role?, contentType: String = "application/msgpack") -> HTTPFields {
        harness.headers(role, contentType: contentType)
    }

    @Test(arguments: [Role?.none, .readOnly, .operator, .gateway])
    func rolesWithTheTokenInTheHeader(role: Role?) async throws {
        try await RouterHarness.with { harness, client in
            let body = ByteBuffer(bytes: Self.messagePack([Self.defaultUUIDFrame]))
            try await client.execute(uri: "/v1/gateways/april-brother", method: .post, headers: headers(harness, role), body: body) { response in
                switch role {
                case nil: #expect(response.status == .unauthorized)
                case .gateway: #expect(response.status == .accepted, "\(response.text)")
                default: #expect(response.status == .forbidden)
                }
                if role != .gateway { #expect(response.errorField == "Authorization") }
            }
        }
    }

    @Test func theTokenMayComeInTheURLAsTheFirmwarePostsIt() async throws {
        try await RouterHarness.with { harness, client in
            let body = ByteBuffer(bytes: Self.messagePack([Self.defaultUUIDFrame, Self.keyDeviceFrame, Self.flagsOnlyFrame]))
            let gatewayToken = harness.tokens[.gateway]!
            try await client.execute(uri: "/v1/gateways/april-brother?token=\(gatewayToken)", method: .post,
                                     headers: headers(harness, nil), body: body) { response in
                #expect(response.status == .accepted, "\(response.text)")
                let reply = try response.json(ProximaServer.AprilBrotherReply.self)
                #expect(reply.accepted == 2)
                #expect(reply.ignored == 1)
            }
            try await client.execute(uri: "/v1/gateways/april-brother?token=\(harness.tokens[.readOnly]!)", method: .post,
                                     headers: headers(harness, nil), body: body) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/v1/gateways/april-brother?token=px_not_a_token", method: .post,
                                     headers: headers(harness, nil), body: body) { response in
                #expect(response.status == .unauthorized)
            }
            // The query token is for this route only.
            try await client.execute(uri: "/v1/sightings?token=\(gatewayToken)", method: .post,
                                     headers: harness.headers(nil), body: ByteBuffer(string: #"{"sightings":[]}"#)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.text.contains("proxima_sightings_ingested_total 2"))
            }
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var body: [UInt8]
        var contentType = "application/msgpack"
        var status: Int = 400
        var field: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "truncated MessagePack", body: Array(messagePack([defaultUUIDFrame]).dropLast(5)), field: "body"),
        Refusal(name: "not a map", body: [0x92, 0x01, 0x02], field: "body"),
        Refusal(name: "no devices", body: [0x81, 0xA1, 0x76, 0xA1, 0x31], field: "devices"),
        Refusal(name: "a device that is a number", body: [0x81, 0xA7] + Array("devices".utf8) + [0x92] + [0xC4, 0x26] + bytes(defaultUUIDFrame) + [0x05], field: "devices[1]"),
        Refusal(name: "a frame shorter than its header", body: [0x81, 0xA7] + Array("devices".utf8) + [0x91, 0xC4, 0x03, 0x00, 0x01, 0x02], field: "devices[0]"),
        Refusal(name: "an advertisement type past 4", body: messagePack(["09" + String(defaultUUIDFrame.dropFirst(2))]), field: "devices[0]"),
        Refusal(name: "a bad MAC in the JSON array form", body: Array(#"{"devices":[[0,"nonsense",-60,"020106"]]}"#.utf8), contentType: "application/json", field: "devices[0][1]"),
        Refusal(name: "malformed JSON", body: Array(#"{"devices":["#.utf8), contentType: "application/json", field: "body"),
        Refusal(name: "another content type", body: messagePack([defaultUUIDFrame]), contentType: "text/plain", status: 415, field: "Content-Type"),
        Refusal(name: "too many devices", body: messagePack(Array(repeating: defaultUUIDFrame, count: 11)), status: 413, field: "devices"),
        Refusal(name: "an empty body", body: [], field: "body"),
    ]

    @Test(arguments: refusals)
    func eachRefusalNamesItsField(refusal: Refusal) async throws {
        var configuration = ServerConfiguration()
        configuration.maxSightingsPerBatch = 10
        try await RouterHarness.with(configuration: configuration) { harness, client in
            try await client.execute(uri: "/v1/gateways/april-brother", method: .post,
                                     headers: headers(harness, .gateway, contentType: refusal.contentType), body: ByteBuffer(bytes: refusal.body)) { response in
                #expect(Int(response.status.code) == refusal.status, "\(response.text)")
                #expect(response.errorField == refusal.field, "\(response.text)")
            }
        }
    }
}
