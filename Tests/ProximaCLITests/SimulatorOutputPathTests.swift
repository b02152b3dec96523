import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where `simulate` and `evaluate` write files, and what they accept as a duration.
@Suite struct SimulatorOutputPathTests {
    static func fileType(_ path: String) -> mode_t {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        return status.st_mode & S_IFMT
    }

    /// A symlink at the capture path is followed, not replaced: the link stays and its target
    /// receives the capture.
    @Test func aCaptureIsWrittenThroughASymlink() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let targetFolder = directory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: targetFolder, withIntermediateDirectories: true)
        let target = targetFolder.appendingPathComponent("capture.pcap")
        try Data("old".utf8).write(to: target)
        let link = directory.appendingPathComponent("link.pcap")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

        let outcome = try await ProximaBinary.run(["simulate", museum, "--duration", "2", "--receiver", "guard", "--pcap", link.path])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(Self.fileType(link.path) == S_IFLNK)
        let written = try Data(contentsOf: target)
        #expect(Array(written.prefix(4)) == [0xD4, 0xC3, 0xB2, 0xA1])
        #expect(written.count > 24)
    }

    /// A FIFO at the capture path stays a FIFO, and the reader at its other end gets the capture.
    @Test func aCaptureIsWrittenIntoAFIFO() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let fifo = directory.appendingPathComponent("live.btsnoop").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened before the writer so that its open does not wait; non-blocking so that a writer
        // that never comes (one that replaced the FIFO) leaves nothing to read instead of a hang.
        // A capture of one second of one receiver fits in the pipe's buffer.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }

        let outcome = try await ProximaBinary.run(["simulate", museum, "--duration", "1", "--receiver", "guard", "--btsnoop", fifo])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(Self.fileType(fifo) == S_IFIFO)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(reader, &buffer, buffer.count)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        #expect(Array(received.prefix(8)) == Array("btsnoop\0".utf8))
        #expect(received.count > 16)
    }

    /// A device at the capture path is written, not replaced; a full one is an error.
    @Test(.enabled(if: fileType("/dev/full") == S_IFCHR))
    func aCaptureIntoAFullDeviceFailsAndLeavesTheDevice() async throws {
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try await ProximaBinary.run(["simulate", museum, "--duration", "1", "--receiver", "guard", "--pcap", "/dev/full"])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("Error"))
        #expect(Self.fileType("/dev/full") == S_IFCHR)
    }

    @Test(arguments: ["simulate", "evaluate"])
    func aDurationFlagHasTheScenarioFilesLimit(command: String) async throws {
        let museum = SimulatorCommandTests.examples.appendingPathComponent("museum.json").path
        let outcome = try await ProximaBinary.run([command, museum, "--duration", "1e8"])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("--duration: expected a number of seconds in 0.001…10000000"))
        #expect(outcome.standardError.contains("found 100000000.0"))
    }

    /// The plot is output of the run: it goes to the current directory by default, never beside
    /// the scenario, and to `--svg PATH` when given.
    @Test func evaluateWritesItsPlotInTheCurrentDirectory() async throws {
        let directory = try SimulatorCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = directory.appendingPathComponent("scenarios")
        let work = directory.appendingPathComponent("work")
        for folder in [scenarios, work] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let museum = try SimulatorCommandTests.shortened("museum.json", duration: 20, in: scenarios)

        let byDefault = try await ProximaBinary.run(["evaluate", museum], currentDirectory: work)
        #expect(byDefault.status == 0, "\(byDefault.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["museum.svg"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scenarios.path) == ["museum.json"])
        #expect(byDefault.standardOutput.hasSuffix("Plot: museum.svg\n"))

        let chosen = directory.appendingPathComponent("chosen.svg").path
        let explicit = try await ProximaBinary.run(["evaluate", museum, "--svg", chosen], currentDirectory: work)
        #expect(explicit.status == 0, "\(explicit.standardError)")
        #expect(try String(contentsOfFile: chosen, encoding: .utf8).hasPrefix("<svg"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scenarios.path) == ["museum.json"])
    }
}
