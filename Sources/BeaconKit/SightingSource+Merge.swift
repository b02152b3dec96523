extension SightingSource {
    /// Several sources as one stream in time order (a k-way merge on each source's next
    /// sighting): one capture per receiver replayed together, for instance. The merged stream
    /// waits for every unfinished source's next sighting before yielding, so paced sources go at
    /// the pace of the slowest; `stop` stops them all.
    public static func merged(_ sources: [SightingSource]) -> SightingSource {
        guard sources.count != 1 else { return sources[0] }
        let streams = sources.map(\.sightings)
        let timing: Timing = sources.contains { $0.timing == .live } ? .live : .recorded
        let stops = sources.map(\.stop)
        let merged = AsyncThrowingStream<Sighting, any Error> { continuation in
            let task = Task {
                var iterators = streams.map { $0.makeAsyncIterator() }
                var heads: [Sighting?] = []
                do {
                    for index in iterators.indices { heads.append(try await iterators[index].next()) }
                    while !Task.isCancelled {
                        var earliest: Int?
                        for index in heads.indices {
                            guard let head = heads[index] else { continue }
                            if earliest.map({ head.time < heads[$0]!.time }) ?? true { earliest = index }
                        }
                        guard let index = earliest else { break }
                        continuation.yield(heads[index]!)
                        heads[index] = try await iterators[index].next()
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        let descriptions = sources.compactMap(\.description)
        return SightingSource(sightings: merged, timing: timing,
                              description: descriptions.isEmpty ? nil : descriptions.joined(separator: "; "),
                              stop: { for stop in stops { try await stop() } })
    }
}
