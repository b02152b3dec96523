import ArgumentParser
import BeaconKit
import Foundation

/// The one place `locate` touches the sighting sources: JSON-lines sightings, or any source of
/// the shared ``SourceOptions``. Kept small so it can follow the sources when they move.
struct LocateSightingInput {
    var jsonLines: String?
    var source: SourceOptions

    init(options: Locate) {
        jsonLines = options.sightings
        source = options.source
    }

    /// Longest accepted JSON line; a longer one is an error naming its line.
    static let maximumLineBytes = 64 << 10

    func sightings() async throws -> AsyncThrowingStream<Sighting, any Error> {
        guard let jsonLines else { return try await source.open().sightings }
        let handle: FileHandle
        if jsonLines == "-" {
            handle = .standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: jsonLines) else { throw ValidationError("cannot read \(jsonLines)") }
            handle = opened
        }
        let name = jsonLines
        return AsyncThrowingStream { continuation in
            let task = Task {
                let decoder = JSONDecoder()
                var number = 0
                do {
                    var buffer = Data()
                    func decode(_ line: Data) throws {
                        number += 1
                        let text = String(decoding: line, as: UTF8.self)
                        if text.allSatisfy(\.isWhitespace) { return }
                        do {
                            continuation.yield(try decoder.decode(Sighting.self, from: line))
                        } catch {
                            throw ValidationError("\(name):\(number): expected a sighting as `proxima scan --json` writes it, found \(error)")
                        }
                    }
                    while !Task.isCancelled, let chunk = try handle.read(upToCount: 64 << 10), !chunk.isEmpty {
                        buffer.append(chunk)
                        // Lines are cut by index and the buffer shortened once per chunk, so a
                        // chunk of many short lines is not moved once per line.
                        var lineStart = buffer.startIndex
                        while let newline = buffer[lineStart...].firstIndex(of: 0x0A) {
                            try decode(buffer[lineStart..<newline])
                            lineStart = newline + 1
                        }
                        buffer.removeSubrange(buffer.startIndex..<lineStart)
                        if buffer.count > Self.maximumLineBytes {
                            throw ValidationError("\(name):\(number + 1): expected a sighting of at most \(Self.maximumLineBytes) bytes, found a longer line")
                        }
                    }
                    if !buffer.isEmpty { try decode(buffer) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension SourceOptions {
    var isChosen: Bool { !replay.isEmpty || [controller.device, controller.h4, controller.serial, simulate].contains { $0 != nil } }
}
