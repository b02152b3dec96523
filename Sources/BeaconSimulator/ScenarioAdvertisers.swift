import BeaconKit
import Foundation

/// What a program advertising on the simulator writes: the frame a simulated phone sends, as
/// `proxima help-request --simulated-transmitter FILE` writes it while it advertises (and
/// removes when it stops). A scenario's `advertisers` list binds such a file to one of its beacons.
public struct SimulatedTransmitterFile: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var measuredPower: Int

    public init(frame: IBeaconFrame) {
        uuid = frame.identity.uuid
        major = frame.identity.major
        minor = frame.identity.minor
        measuredPower = Int(frame.measuredPower.dBm)
    }

    /// Writes the file whole (a reader never sees half of it).
    public func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: url, options: .atomic)
    }
}

extension Scenario {
    /// Checks the optional `advertisers` list: `[{"beacon": NAME, "file": PATH}]`, each naming a
    /// beacon of the scenario once. Returns the pairs in order.
    static func advertisers(_ cursor: JSONCursor?, beacons: [SimulatedBeacon]) throws(ScenarioError) -> [(index: Int, beacon: Int, file: String)] {
        guard let cursor else { return [] }
        var result: [(index: Int, beacon: Int, file: String)] = []
        for (index, element) in try cursor.elements().enumerated() {
            let entry = try element.object(allowing: ["beacon", "file"])
            let name = try entry.required("beacon").string()
            guard let beacon = beacons.firstIndex(where: { $0.name == name }) else {
                throw ScenarioError(path: "\(element.path).beacon", expected: "the name of a beacon of the scenario", found: "\"\(name.prefix(80))\"")
            }
            guard !result.contains(where: { $0.beacon == beacon }) else {
                throw ScenarioError(path: "\(element.path).beacon", expected: "a beacon no other advertiser names", found: "\"\(name.prefix(80))\" again")
            }
            let file = try entry.required("file").string()
            guard !file.isEmpty, file.utf8.count <= 4096 else {
                throw ScenarioError(path: "\(element.path).file", expected: "a file path (relative to the scenario file)", found: "\"\(file.prefix(80))\"")
            }
            result.append((index, beacon, file))
        }
        return result
    }

    /// Reads each advertiser's file once, when the scenario is loaded: a file present gives its
    /// beacon the identity and measured power in it; a file absent means that phone is not
    /// advertising, and its beacon is left out (with the region made for it).
    mutating func applyAdvertisers(_ cursor: JSONCursor?, directory: URL) throws(ScenarioError) {
        let bindings = try Self.advertisers(cursor, beacons: beacons)
        var silent: Set<Int> = []
        for binding in bindings {
            let url = URL(fileURLWithPath: binding.file, relativeTo: directory)
            let path = "advertisers[\(binding.index)].file"
            guard let data = try? Data(contentsOf: url) else {
                silent.insert(binding.beacon)
                continue
            }
            let file: SimulatedTransmitterFile
            do { file = try JSONDecoder().decode(SimulatedTransmitterFile.self, from: data) } catch let error as DecodingError {
                let (field, reason) = DecodingFailure.describe(error)
                throw ScenarioError(path: path, expected: "a transmitter file {uuid, major, minor, measuredPower} at \(url.path)",
                                    found: "\(field): \(reason)")
            } catch {
                throw ScenarioError(path: path, expected: "a transmitter file at \(url.path)", found: "\(error)")
            }
            guard let power = Int8(exactly: file.measuredPower), power < 0 else {
                throw ScenarioError(path: path, expected: "measuredPower in -128…-1 dBm in \(url.path)", found: "\(file.measuredPower)")
            }
            let old = beacons[binding.beacon]
            let identity = BeaconIdentity(uuid: file.uuid, major: file.major, minor: file.minor)
            beacons[binding.beacon].identity = identity
            beacons[binding.beacon].measuredPower = MeasuredPower(power)
            for index in regions.indices where regions[index].name == old.name && regions[index].matches(old.identity) {
                regions[index] = SimulatedRegion(name: old.name, uuid: identity.uuid, major: identity.major, minor: identity.minor)
            }
        }
        guard !silent.isEmpty else { return }
        let names = Set(silent.map { beacons[$0].name })
        beacons = beacons.enumerated().filter { !silent.contains($0.offset) }.map(\.element)
        regions.removeAll { names.contains($0.name) }
        guard !beacons.isEmpty else {
            throw ScenarioError(path: "advertisers", expected: "at least one beacon transmitting", found: "none: every advertiser's file is absent")
        }
    }
}
