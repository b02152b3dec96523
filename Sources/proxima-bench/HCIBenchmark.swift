import BeaconHCI
import BeaconKit
import Foundation

/// H4 framing, capture reading and report decoding: the per-packet work of a scan and a replay.
enum HCIBenchmark {
    static func run() async throws {
        let beacon = IBeaconFrame(identity: BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                                                           major: 1, minor: 2), measuredPower: MeasuredPower(-59))
        let count = 200_000
        let packets: [TimestampedPacket] = (0..<count).map { index in
            let report = AdvertisingReport(kind: .legacy(eventType: 3), addressType: 0,
                                           address: BluetoothAddress(rawValue: UInt64(index % 500)), rssi: Int8(-40 - index % 50),
                                           data: beacon.advertisingData())
            return TimestampedPacket(microseconds: 1_700_000_000_000_000 + Int64(index) * 1000, direction: .received,
                                     packet: HCIPacket(type: .event, body: AdvertisingReport.legacyEventPacket([report])))
        }
        let stream = packets.flatMap(\.packet.h4Bytes)
        print("\(count) LE Advertising Report events, \(stream.count) bytes of H4")

        for chunk in [4096, 64, 1] {
            let seconds = try time {
                var framer = H4Framer()
                var framed = 0
                var start = 0
                while start < stream.count {
                    let end = min(start + chunk, stream.count)
                    framed += try framer.append(stream[start..<end]).count
                    start = end
                }
                precondition(framed == count)
            }
            print(String(format: "H4 framer, reads of %5d bytes: %8.0f packets/s, %6.1f MB/s", chunk,
                         Double(count) / seconds, Double(stream.count) / seconds / 1e6))
        }

        var snoop = BTSnoopWriter.header
        for packet in packets { snoop += BTSnoopWriter.encodeRecord(packet) }
        var pcap = PcapWriter.header
        for packet in packets { pcap += PcapWriter.encodeRecord(packet) }
        for (name, bytes) in [("btsnoop", snoop), ("pcap 201", pcap)] {
            var capture: Capture?
            let readSeconds = try time { capture = try CaptureReader.parse(bytes) }
            var sightings = 0
            let decodeSeconds = try time {
                sightings = CaptureReplay.allSightings(capture: capture!, receiver: "bench").count
            }
            precondition(sightings == count)
            print(String(format: "%@: read %8.0f packets/s; report → sighting %8.0f sightings/s", name,
                         Double(count) / readSeconds, Double(count) / decodeSeconds))
        }
    }

    static func time(_ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let elapsed = try clock.measure(body)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
