import BeaconKit
import Foundation

/// Runs a ``BeaconManager`` over a source: feeds its sightings, ticks it once a second with the
/// wall clock for live sources, and yields every event. Replays and the simulator carry their
/// own time, so only their sightings move the engine's clock; when such a source ends, the
/// clock moves on far enough for pending exits and the last ranging cycles.
enum EngineRunner {
    static func events(source: SourceOptions, configuration: EngineConfiguration,
                       monitor: [BeaconRegion], range: [BeaconRegion], receiver: String? = nil) async throws -> (AsyncStream<BeaconEvent>, Task<Void, any Error>) {
        let manager = BeaconManager(configuration: configuration)
        let live = source.deliversLiveTime
        let startTime: Double? = live ? Date().timeIntervalSince1970 : nil
        for region in monitor { try await manager.startMonitoring(region, at: startTime) }
        for region in range { await manager.startRanging(region) }
        let sightings = try await source.makeSightings()
        let flushSpan = flushSeconds(configuration)

        let ticker: Task<Void, Never>? = live ? Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000_000)
                await manager.advance(to: Date().timeIntervalSince1970)
            }
        } : nil
        let feeder = Task {
            var last: Double?
            // One engine models one receiver: mixing several receivers' packets would make every
            // beacon look near to someone. Without --receiver, follow the first one heard.
            var followed = receiver
            var toldAboutOthers = false
            do {
                for try await sighting in sightings {
                    if followed == nil { followed = sighting.receiver }
                    if sighting.receiver != followed {
                        if receiver == nil && !toldAboutOthers {
                            toldAboutOthers = true
                            FileHandle.standardError.write(Data(
                                "note: this source has several receivers; following \"\(followed ?? "")\" (choose one with --receiver NAME)\n".utf8))
                        }
                        continue
                    }
                    await manager.receive(sighting)
                    last = sighting.time
                }
            } catch {
                ticker?.cancel()
                await manager.finish()
                throw error
            }
            ticker?.cancel()
            if !live, let last { await manager.advance(to: last + flushSpan) }
            await manager.finish()
        }
        return (manager.events, feeder)
    }

    /// Long enough after the last packet for every beacon to exit and leave ranging lists.
    static func flushSeconds(_ configuration: EngineConfiguration) -> Double {
        let exit: Double
        switch configuration.exitRule {
        case .adaptive(let parameters): exit = parameters.ceiling
        case .fixedDelay(let seconds): exit = seconds
        }
        return max(exit, configuration.trackingAge) + configuration.rangingCycle + configuration.exitCheckInterval
    }
}

/// Output helpers shared by the engine commands.
enum Terminal {
    static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Clears the screen and moves the cursor home (ANSI), so a table redraws in place.
    static let clear = "\u{1B}[H\u{1B}[2J"

    static func jsonLine(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) else { return "{}" }
        return text
    }

    static func timestamp(_ time: Double) -> String {
        // Live times are epoch seconds; replayed or simulated ones may be small.
        if time > 1_000_000_000 {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss.SSS"
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: time))
        }
        return String(format: "%.3f", time)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func flush() { fflush(nil) }  // nil flushes every output stream, stdout included
}
