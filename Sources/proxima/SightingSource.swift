import BeaconHCI
import BeaconKit

/// A stream of sightings and how to stop its source cleanly.
struct SightingSource: Sendable {
    var sightings: AsyncThrowingStream<Sighting, any Error>
    var description: String?
    var stop: @Sendable () async throws -> Void

    static func scan(_ endpoint: ControllerEndpoint, settings: ScanSettings, recorders: [any PacketRecorder]) async throws -> SightingSource {
        let transport = try endpoint.open()
        let host = HostController(transport: transport, recorders: recorders)
        let session: ScanSession
        do {
            session = try await ScanSession.start(controller: host, settings: settings) { error in
                printError("ignored a malformed advertisement: \(error)")
            }
        } catch {
            await host.close()
            throw error
        }
        let mode = settings.active ? "active" : "passive"
        let channel = transport.channelNote.map { ", \($0)" } ?? ""
        return SightingSource(sightings: session.sightings,
                              description: "Scanning on \(endpoint) (\(mode)\(channel), duplicates not filtered)",
                              stop: { try await session.stop() })
    }
}
