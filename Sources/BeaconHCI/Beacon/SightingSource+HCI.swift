import BeaconKit
import Foundation

extension SightingSource {
    /// A live scan on a controller; `stop()` disables the scan and closes the
    /// controller. Every report is delivered (duplicates are not filtered), and `recorders` get
    /// every HCI packet.
    public static func scan(_ endpoint: ControllerEndpoint, settings: ScanSettings = ScanSettings(),
                            recorders: [any PacketRecorder] = [],
                            onMalformed: (@Sendable (DecodeError) -> Void)? = nil) async throws -> SightingSource {
        let transport = try endpoint.open()
        let host = HostController(transport: transport, recorders: recorders)
        let session: ScanSession
        do {
            session = try await ScanSession.start(controller: host, settings: settings, onMalformed: onMalformed)
        } catch {
            await host.close()
            throw error
        }
        let mode = settings.active ? "active" : "passive"
        let channel = transport.channelNote.map { ", \($0)" } ?? ""
        return SightingSource(sightings: session.sightings, timing: .live,
                              description: "Scanning on \(endpoint) (\(mode)\(channel), duplicates not filtered)",
                              stop: { try await session.stop() })
    }

    /// A btsnoop or pcap capture replayed at `speed` (0 = as fast as possible), on the
    /// capture's own clock. `receiver` names the receiver in the sightings (default: the
    /// file's name).
    public static func replay(_ url: URL, speed: Double = 1, receiver: String? = nil) throws -> SightingSource {
        SightingSource(sightings: try CaptureReplay.sightings(url: url, speed: speed, receiver: receiver), timing: .recorded,
                       description: "Replaying \(url.path)\(receiver.map { " as \($0)" } ?? "")")
    }
}
