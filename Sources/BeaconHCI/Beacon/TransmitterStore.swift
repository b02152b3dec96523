import BeaconKit
import Foundation

/// A saved transmitter, like the Locate Beacon app's transmitter screen: a name, the identity,
/// the measured power to advertise, and whether it is switched on.
public struct SavedTransmitter: Sendable, Hashable, Codable {
    public var name: String
    public var identity: BeaconIdentity
    public var measuredPower: MeasuredPower
    public var enabled: Bool

    public init(name: String, identity: BeaconIdentity, measuredPower: MeasuredPower = .appleDefault, enabled: Bool = true) {
        self.name = name
        self.identity = identity
        self.measuredPower = measuredPower
        self.enabled = enabled
    }

    public var frame: IBeaconFrame { IBeaconFrame(identity: identity, measuredPower: measuredPower) }
}

/// Saved transmitters in `transmitters.json` in the configuration directory.
public struct TransmitterStore: Sendable {
    public static let fileName = "transmitters.json"
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    public var url: URL { ConfigurationDirectory.url(environment: environment).appendingPathComponent(Self.fileName) }

    /// The saved transmitters sorted by name; none when the file does not exist yet.
    public func load() throws -> [SavedTransmitter] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let data = try Data(contentsOf: url)
        do {
            return try JSONDecoder().decode([SavedTransmitter].self, from: data).sorted { $0.name < $1.name }
        } catch {
            throw TransmitterStoreError("\(url.path) is not a valid transmitter list: \(error)")
        }
    }

    public func transmitter(named name: String) throws -> SavedTransmitter {
        let all = try load()
        guard let found = all.first(where: { $0.name == name }) else {
            let known = all.isEmpty ? "none saved yet" : "saved: " + all.map(\.name).joined(separator: ", ")
            throw TransmitterStoreError("no transmitter named '\(name)' (\(known)); add one with `proxima transmitters add`")
        }
        return found
    }

    /// Adds a transmitter; replaces one of the same name only when `replace` is true.
    public func add(_ transmitter: SavedTransmitter, replace: Bool = false) throws {
        guard !transmitter.name.isEmpty, !transmitter.name.contains("/") else {
            throw TransmitterStoreError("a transmitter name must be non-empty and contain no '/'")
        }
        var all = try load()
        if let index = all.firstIndex(where: { $0.name == transmitter.name }) {
            guard replace else {
                throw TransmitterStoreError("a transmitter named '\(transmitter.name)' exists; use --replace to overwrite it")
            }
            all[index] = transmitter
        } else {
            all.append(transmitter)
        }
        try save(all)
    }

    @discardableResult
    public func remove(named name: String) throws -> SavedTransmitter {
        var all = try load()
        guard let index = all.firstIndex(where: { $0.name == name }) else {
            throw TransmitterStoreError("no transmitter named '\(name)'")
        }
        let removed = all.remove(at: index)
        try save(all)
        return removed
    }

    public func setEnabled(_ enabled: Bool, named name: String) throws {
        var all = try load()
        guard let index = all.firstIndex(where: { $0.name == name }) else {
            throw TransmitterStoreError("no transmitter named '\(name)'")
        }
        all[index].enabled = enabled
        try save(all)
    }

    private func save(_ transmitters: [SavedTransmitter]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try ConfigurationDirectory.write(try encoder.encode(transmitters.sorted { $0.name < $1.name }),
                                         to: Self.fileName, environment: environment)
    }
}

public struct TransmitterStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
