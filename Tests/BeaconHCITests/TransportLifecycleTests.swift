import BeaconHCI
import BeaconKit
import BeaconTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The transport's threads and blocking behaviour: reconnecting does not pile up threads, and a
/// controller that stops reading cannot hold the host for ever.
@Suite(.serialized) struct TransportLifecycleTests {
    /// The names of this process's threads, from /proc/self/task/*/comm.
    static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// One connection's life, as a scan that reconnects lives it: open, one command answered,
    /// the controller goes away, the host closes.
    static func connectExchangeAndDrop() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(30))
        async let reply = host.send(HCICommand(opcode: .reset))
        #expect(try await script.nextCommand()?.opcode == .reset)
        try await script.send(ScriptedController.commandComplete(.reset))
        _ = try await reply
        script.disconnect()
        await host.close()
    }

    static func socketPair() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw HCITransportError(transport: "test", message: "socketpair failed: errno \(errno)")
        }
        return (ends[0], ends[1])
    }

    @Test func aThousandReconnectsKeepTheThreadCount() async throws {
        try await Self.connectExchangeAndDrop()
        let before = try Self.threadNames().count
        for _ in 0..<1000 { try await Self.connectExchangeAndDrop() }
        let after = try Self.threadNames().count
        // A thread per connection would add 1,000. The count is the whole process's, and the
        // suites running beside this one start threads of their own (NIO event loops, the
        // cooperative pool, child-process readers): a few dozen at most, far below 1,000.
        #expect(after - before <= 50, "threads before: \(before), after 1,000 reconnects: \(after)")
    }

    @Test func manyOpenLinksShareOneIOThread() async throws {
        try await Self.connectExchangeAndDrop()
        let before = try Self.threadNames().count
        let scripts = try (0..<64).map { _ in try ScriptedController() }
        let hosts = scripts.map { HostController(transport: $0.hostTransport, defaultTimeout: .seconds(30)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (script, host) in zip(scripts, hosts) {
                group.addTask {
                    async let reply = host.send(HCICommand(opcode: .reset))
                    _ = try await script.nextCommand()
                    try await script.send(ScriptedController.commandComplete(.reset))
                    _ = try await reply
                }
            }
            try await group.waitForAll()
        }
        let whileOpen = try Self.threadNames().count
        // One I/O thread serves all 128 descriptors (a thread per link would add 64 or 128);
        // the margin is for threads other suites start meanwhile, as above.
        #expect(whileOpen - before <= 32, "threads before: \(before), with 128 descriptors open: \(whileOpen)")
        for host in hosts { await host.close() }
        for script in scripts { script.disconnect() }
    }

    @Test func aControllerThatStopsReadingFailsTheLinkWithAClearError() async throws {
        let (hostEnd, controllerEnd) = try Self.socketPair()
        defer { close(controllerEnd) }
        let transport = try FileDescriptorTransport(descriptor: hostEnd, name: "stalled", writeTimeout: .milliseconds(200))
        let command = HCICommand(opcode: .reset).packet
        var sent = 0
        do {
            // The controller end never reads: the socket buffer fills, then the link must fail.
            while true {
                try await transport.send(command)
                sent += 1
            }
        } catch let error as HCITransportError {
            #expect(error.transport == "stalled")
            #expect(error.message.contains("the controller stopped reading"), "\(error)")
        }
        #expect(sent > 0)
        // The reading side learns the same, and close() returns at once.
        var failure: (any Error)?
        do { for try await _ in transport.incoming {} } catch { failure = error }
        #expect("\(failure.map { "\($0)" } ?? "none")".contains("stopped reading"))
        transport.close()
    }

    @Test func closeDoesNotWaitForAWriteTheControllerNeverTakes() async throws {
        let (hostEnd, controllerEnd) = try Self.socketPair()
        defer { close(controllerEnd) }
        let transport = try FileDescriptorTransport(descriptor: hostEnd, name: "stuck", writeTimeout: .seconds(3600))
        // Far more than a socket buffer holds, so the write is still waiting when close() comes.
        let pending = Task { try await transport.writeRaw([UInt8](repeating: 0x04, count: 8 << 20)) }
        transport.close()
        await #expect(throws: HCITransportError.self) { try await pending.value }
        await #expect(throws: HCITransportError.self) { try await transport.send(HCICommand(opcode: .reset).packet) }
    }

    @Test func aPeerThatWentAwayIsAnErrorNotASignal() async throws {
        let (hostEnd, controllerEnd) = try Self.socketPair()
        close(controllerEnd)
        let transport = try FileDescriptorTransport(descriptor: hostEnd, name: "gone")
        // Without MSG_NOSIGNAL this write would raise SIGPIPE and end the test process.
        await #expect(throws: HCITransportError.self) { try await transport.send(HCICommand(opcode: .reset).packet) }
        transport.close()
    }
}
