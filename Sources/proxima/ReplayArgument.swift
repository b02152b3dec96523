import ArgumentParser
import BeaconHCI
import BeaconKit
import Foundation

/// `--replay FILE` or `--replay NAME=FILE` (repeatable): captures to replay, each optionally
/// naming the receiver it was taken on.
enum ReplayArgument {
    /// The receiver name and file of one argument. A value that is an existing file is a file
    /// even if its name holds "=".
    static func parse(_ value: String) throws -> (receiver: String?, path: String) {
        if FileManager.default.fileExists(atPath: value) { return (nil, value) }
        guard let equals = value.firstIndex(of: "=") else { return (nil, value) }
        let name = String(value[..<equals]), path = String(value[value.index(after: equals)...])
        guard !name.isEmpty, !path.isEmpty else {
            throw ValidationError("--replay: expected FILE or NAME=FILE, found \"\(value)\"")
        }
        return (name, path)
    }

    static func source(_ values: [String], speed: Double) throws -> SightingSource {
        let parsed = try values.map(parse)
        var names: Set<String> = []
        for entry in parsed {
            let name = entry.receiver ?? URL(fileURLWithPath: entry.path).lastPathComponent
            guard names.insert(name).inserted else {
                throw ValidationError("--replay: receiver \"\(name)\" given twice; name each capture with NAME=FILE")
            }
        }
        return SightingSource.merged(try parsed.map { entry in
            try SightingSource.replay(URL(fileURLWithPath: entry.path), speed: speed, receiver: entry.receiver)
        })
    }
}
