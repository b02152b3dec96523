import ArgumentParser
import BeaconKit
import Foundation

struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode beacons from hex: advertising data, manufacturer data, an HCI event or a gateway frame.",
        discussion: """
            Reads each HEX argument, or standard input one per line when there are none (blank \
            lines and lines starting with # are skipped). Prints every iBeacon found. Exits 1 \
            when an input is malformed or holds no iBeacon, with the reason on standard error.
            """
    )

    @Argument(help: "Hex bytes; spaces and colons are allowed inside one quoted argument.")
    var hex: [String] = []

    @Option(help: "Input format: \(InputFormat.allCases.map(\.rawValue).joined(separator: ", ")) (default: detect).")
    var format: InputFormat?

    @Flag(help: "Print one JSON object per beacon (Core Location names: uuid, major, minor, measuredPower, rssi).")
    var json = false

    @Flag(help: "Also print AltBeacon and Eddystone frames, and accept inputs that hold only those.")
    var allFormats = false

    func run() throws {
        let inputs = hex.isEmpty ? standardInputLines() : hex
        var failures = 0
        for (index, text) in inputs.enumerated() {
            let label = inputs.count > 1 ? "input \(index + 1): " : ""
            let decoded: DecodedInput
            do { decoded = try InputDecoder.decode(hex: text, format: format) } catch {
                failures += 1
                printError(label + "malformed: \(error)")
                continue
            }
            let beacons = allFormats ? decoded.beacons : decoded.iBeacons
            guard !beacons.isEmpty else {
                failures += 1
                printError(label + (allFormats ? decoded.noBeaconReason : decoded.noIBeaconReason))
                continue
            }
            for beacon in beacons {
                if json { try StandardOutput.jsonLine(beacon) } else { try StandardOutput.line(beacon.description) }
            }
        }
        if inputs.isEmpty {
            printError("no input: give HEX arguments or lines on standard input")
            throw ExitCode.failure
        }
        if failures > 0 { throw ExitCode.failure }
    }

    private func standardInputLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            lines.append(trimmed)
        }
        return lines
    }
}

func printError(_ message: String) {
    var standardError = StandardError()
    print("proxima: \(message)", to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
