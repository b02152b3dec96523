import BeaconHCI
import BeaconKit
import BeaconTesting
import Foundation
import Testing

@Suite struct HostControllerTests {
    @Test func commandCompleteReturnsItsParameters() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport)
        async let reply = host.send(HCICommand(opcode: .readBDAddress))
        let command = try #require(await script.nextCommand())
        #expect(command.opcode == .readBDAddress)
        try await script.send(ScriptedController.commandComplete(.readBDAddress, returnParameters: [1, 2, 3, 4, 5, 6]))
        #expect(try await reply.returnParameters == [1, 2, 3, 4, 5, 6])
        await host.close()
    }

    @Test func silenceTimesOutNamingTheCommand() async throws {
        let script = try ScriptedController()
        let clock = TestClock()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(2), clock: clock)
        let silent = Task { try await host.send(LECommand.setScanEnable(true)) }
        #expect(try await script.nextCommand()?.opcode == .leSetScanEnable)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        await #expect(throws: HostControllerError.timedOut(opcode: .leSetScanEnable, after: .seconds(2), ignoredReplies: [])) {
            try await silent.value
        }
        // The lost reply must not wedge the link: the next command goes out and succeeds.
        async let next = host.send(HCICommand(opcode: .reset))
        let command = try #require(await script.nextCommand())
        #expect(command.opcode == .reset)
        try await script.send(ScriptedController.commandComplete(.reset))
        _ = try await next
        await host.close()
    }

    @Test func failingStatusThrowsTheStatusName() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport)
        async let reply = host.send(LECommand.setAdvertisingParameters(interval: LEInterval(units: 0x00A0)))
        _ = try #require(await script.nextCommand())
        try await script.send(ScriptedController.commandComplete(.leSetAdvertisingParameters, status: .commandDisallowed))
        do {
            _ = try await reply
            Issue.record("a refused command must throw")
        } catch let error as HostControllerError {
            #expect(error.status == .commandDisallowed)
            #expect(error.description.contains("LE Set Advertising Parameters (0x2006)"))
            #expect(error.description.contains("Command Disallowed (0x0C)"))
        }
        await host.close()
    }

    @Test func commandStatusFailureThrows() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport)
        let reply = Task { try await host.send(LECommand.setScanEnable(true)) }
        _ = try #require(await script.nextCommand())
        try await script.send(CommandStatus(status: .unknownCommand, numberOfCommandPackets: 1, opcode: .leSetScanEnable).event)
        await #expect(throws: HostControllerError.commandFailed(opcode: .leSetScanEnable, status: .unknownCommand)) {
            try await reply.value
        }
        await host.close()
    }

    @Test func replyForAnotherOpcodeIsNotTakenAsTheAnswer() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(10))
        async let reply = host.send(LECommand.setAdvertisingEnable(true))
        _ = try #require(await script.nextCommand())
        // A failing reply for a different command: must be ignored, not applied to ours.
        try await script.send(ScriptedController.commandComplete(.leSetScanEnable, status: .commandDisallowed))
        try await script.send(ScriptedController.commandComplete(.leSetAdvertisingEnable))
        let answer = try await reply
        #expect(answer.opcode == .leSetAdvertisingEnable)
        #expect(await host.unmatchedReplies == [.leSetScanEnable])
        await host.close()
    }

    @Test func onlyAReplyForAnotherOpcodeTimesOutAndSaysSo() async throws {
        let script = try ScriptedController()
        let clock = TestClock()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(3), clock: clock)
        async let reply = host.send(HCICommand(opcode: .reset))
        _ = try #require(await script.nextCommand())
        try await script.send(ScriptedController.commandComplete(.leSetScanParameters))
        // The time moves only once the stray reply has been seen, however busy the machine is.
        await host.waitForUnmatchedReplies(1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(3))
        do {
            _ = try await reply
            Issue.record("expected a timeout")
        } catch let error as HostControllerError {
            guard case .timedOut(let opcode, _, let ignored) = error else {
                Issue.record("expected timedOut, got \(error)")
                return
            }
            #expect(opcode == .reset)
            #expect(ignored == [.leSetScanParameters])
            #expect(error.description.contains("LE Set Scan Parameters"))
        }
        await host.close()
    }

    // Awaits a condition with no deadline of its own: the limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10))) func waitsForCommandCreditsBeforeSending() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(10))
        async let first = host.send(HCICommand(opcode: .reset))
        let firstSeen = try #require(await script.nextCommand())
        #expect(firstSeen.opcode == .reset)
        // Answer, but grant no credit: the controller cannot take another command yet.
        try await script.send(ScriptedController.commandComplete(.reset, credits: 0))
        _ = try await first
        async let second = host.send(LECommand.setScanEnable(false))
        // The host holds the command for want of a credit; the credit-only event then releases
        // it, so the command must arrive after the credit was granted.
        await host.waitForCommandsAwaitingCredit(1)
        let creditGranted = Int64(Date().timeIntervalSince1970 * 1_000_000)
        try await script.send(CommandComplete(numberOfCommandPackets: 1, opcode: .noOperation, returnParameters: []).event)
        let secondSeen = try #require(await script.nextTimedCommand())
        #expect(secondSeen.command.opcode == .leSetScanEnable)
        #expect(secondSeen.arrivedAt >= creditGranted, "the host sent without a credit")
        try await script.send(ScriptedController.commandComplete(.leSetScanEnable))
        _ = try await second
        await host.close()
    }

    @Test func garbageOnH4FailsWithOffsetAndByte() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(10))
        async let reply = host.send(HCICommand(opcode: .reset))
        _ = try #require(await script.nextCommand())
        try await script.writeRaw([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00, 0x7E, 0x00])
        _ = try await reply
        do {
            try await host.send(HCICommand(opcode: .reset))
            Issue.record("a link out of step must fail the next command")
        } catch let error as HostControllerError {
            #expect(error.description.contains("byte 7"))
            #expect(error.description.contains("0x7E"))
        }
        await host.close()
    }

    /// Command Complete for Read BD_ADDR: 13 bytes with the H4 type.
    static let addressReply = ScriptedController.commandComplete(
        .readBDAddress, returnParameters: [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]).packet.h4Bytes

    @Test(arguments: 1..<13)
    func replySplitInTwoReadsAtEveryByteIsReassembled(split: Int) async throws {
        #expect(Self.addressReply.count == 13)
        let script = try ScriptedController(messageBoundaries: true)
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(10))
        async let reply = host.send(HCICommand(opcode: .readBDAddress))
        _ = try #require(await script.nextCommand())
        // SOCK_SEQPACKET: each write is its own read on the host side.
        try await script.writeRaw(Array(Self.addressReply[..<split]))
        try await script.writeRaw(Array(Self.addressReply[split...]))
        #expect(try await reply.returnParameters == [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        await host.close()
    }

    @Test func replyDeliveredOneBytePerReadIsReassembled() async throws {
        let script = try ScriptedController(messageBoundaries: true)
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(10))
        async let reply = host.send(HCICommand(opcode: .readBDAddress))
        _ = try #require(await script.nextCommand())
        for byte in Self.addressReply { try await script.writeRaw([byte]) }
        #expect(try await reply.returnParameters == [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        await host.close()
    }

    @Test func controllerGoingAwayFailsTheCommandInFlight() async throws {
        let script = try ScriptedController()
        let host = HostController(transport: script.hostTransport, defaultTimeout: .seconds(30))
        async let reply = host.send(HCICommand(opcode: .reset))
        _ = try #require(await script.nextCommand())
        script.disconnect()
        do {
            _ = try await reply
            Issue.record("expected the link failure")
        } catch let error as HostControllerError {
            guard case .linkFailed(let message) = error else {
                Issue.record("expected linkFailed, got \(error)")
                return
            }
            #expect(message.contains("closed the connection"))
        }
    }
}
