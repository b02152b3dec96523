import BeaconHCI
import BeaconKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A controller played by a test, across a real socket pair, so that the host side runs the
/// same transport and H4 framing code as with hardware.
///
/// With `messageBoundaries` (SOCK_SEQPACKET) every `writeRaw` arrives as its own read on the
/// host, so tests can split a packet at any byte and know the host saw the pieces apart.
public final class ScriptedController: Sendable {
    /// Give this to `HostController`.
    public let hostTransport: FileDescriptorTransport
    private let controllerEnd: FileDescriptorTransport
    private let commands: CommandInbox

    public init(messageBoundaries: Bool = true, name: String = "scripted") throws {
        var ends: [Int32] = [0, 0]
        let type = messageBoundaries ? Int32(SOCK_SEQPACKET.rawValue) : Int32(SOCK_STREAM.rawValue)
        guard socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw HCITransportError(transport: name, message: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        hostTransport = try FileDescriptorTransport(descriptor: ends[0], name: name)
        controllerEnd = try FileDescriptorTransport(descriptor: ends[1], name: "\(name) (controller side)")
        commands = CommandInbox(controllerEnd.incoming)
    }

    /// The next command the host sent, or nil when the host closed the link.
    public func nextCommand() async throws -> HCICommand? {
        try await nextTimedCommand()?.command
    }

    /// The next command with the moment it arrived here (microseconds since 1970).
    public func nextTimedCommand() async throws -> (command: HCICommand, arrivedAt: Int64)? {
        guard let packet = try await commands.next() else { return nil }
        return (try HCICommand(body: packet.packet.body), packet.microseconds)
    }

    /// Sends bytes exactly as given (one read on the host when `messageBoundaries`).
    public func writeRaw(_ bytes: [UInt8]) async throws { try await controllerEnd.writeRaw(bytes) }

    public func send(_ event: HCIEvent) async throws { try await controllerEnd.send(event.packet) }

    /// Command Complete for `opcode` with `status` and return parameters after it.
    public static func commandComplete(_ opcode: HCIOpcode, status: HCIStatus = .success, credits: UInt8 = 1,
                                       returnParameters: [UInt8] = []) -> HCIEvent {
        CommandComplete(numberOfCommandPackets: credits, opcode: opcode,
                        returnParameters: [status.rawValue] + returnParameters).event
    }

    /// Closes the controller's end: the host sees the link go away.
    public func disconnect() { controllerEnd.close() }

    /// Answers every command with Command Complete and Success until the host closes, calling
    /// `observe` with each command first. Returns the commands seen.
    @discardableResult
    public func acknowledgeAll(observe: @Sendable (HCICommand) throws -> Void = { _ in }) async throws -> [HCICommand] {
        var seen: [HCICommand] = []
        while let command = try await nextCommand() {
            seen.append(command)
            try observe(command)
            try await send(Self.commandComplete(command.opcode))
        }
        return seen
    }
}

/// Serialises reads of the controller side's packet stream.
private actor CommandInbox {
    private var iterator: AsyncThrowingStream<TimestampedPacket, any Error>.AsyncIterator

    init(_ stream: AsyncThrowingStream<TimestampedPacket, any Error>) { iterator = stream.makeAsyncIterator() }

    func next() async throws -> TimestampedPacket? {
        var local = iterator
        defer { iterator = local }
        do {
            return try await local.next(isolation: self)
        } catch is HCITransportError {
            // The host closed its end: for the controller, that is the end of the script.
            return nil
        }
    }
}
