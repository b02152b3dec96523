import Foundation

/// The monitored regions kept across restarts, as `regions.json` in the configuration
/// directory (see ``ConfigurationDirectory``).
public struct RegionStore: Sendable {
    public static let fileName = "regions.json"
    public let environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    public var url: URL { ConfigurationDirectory.url(environment: environment).appendingPathComponent(Self.fileName) }

    /// The stored regions; none when the file does not exist yet.
    public func load() throws(RegionStoreError) -> [BeaconRegion] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return [] }
            throw RegionStoreError(path: url.path, reason: "cannot read: \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(StoredRegions.self, from: data).regions
        } catch let error as DecodingError {
            let (field, reason) = DecodingFailure.describe(error, root: "the top level")
            throw RegionStoreError(path: url.path, reason: "\(field): \(reason)")
        } catch {
            throw RegionStoreError(path: url.path, reason: "\(error)")
        }
    }

    public func save(_ regions: [BeaconRegion]) throws(RegionStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(StoredRegions(regions: regions))
            try ConfigurationDirectory.write(data, to: Self.fileName, environment: environment)
        } catch {
            throw RegionStoreError(path: url.path, reason: "cannot write: \(error.localizedDescription)")
        }
    }

    /// Adds or replaces (same identifier) a region and saves.
    @discardableResult
    public func add(_ region: BeaconRegion) throws(RegionStoreError) -> [BeaconRegion] {
        var regions = try load()
        if let index = regions.firstIndex(where: { $0.identifier == region.identifier }) {
            regions[index] = region
        } else {
            regions.append(region)
        }
        try save(regions)
        return regions
    }

    /// Removes a region by identifier and saves; returns whether it existed.
    @discardableResult
    public func remove(identifier: String) throws(RegionStoreError) -> Bool {
        var regions = try load()
        guard let index = regions.firstIndex(where: { $0.identifier == identifier }) else { return false }
        regions.remove(at: index)
        try save(regions)
        return true
    }

    private struct StoredRegions: Codable {
        var version = 1
        var regions: [BeaconRegion]
    }
}

public struct RegionStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "regions file \(path): \(reason)" }
}
