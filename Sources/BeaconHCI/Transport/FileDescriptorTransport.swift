import BeaconKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HCI transport over a file descriptor that carries H4: a unix stream socket, a serial
/// device, or a Linux HCI socket (whose reads each hold one H4-typed packet).
///
/// A dedicated thread blocks in poll(2) on the descriptor and on a wake-up pipe, so `close()`
/// stops it at once and a dead peer is noticed as soon as the kernel reports it.
public final class FileDescriptorTransport: HCITransport, @unchecked Sendable {
    public let name: String
    public let incoming: AsyncThrowingStream<TimestampedPacket, any Error>

    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let continuation: AsyncThrowingStream<TimestampedPacket, any Error>.Continuation
    private let lock = NSLock()
    private var closed = false
    private var readerExited = false
    private var channelNoteStorage: String?

    /// For an HCI socket, which channel it got ("user channel" or "raw channel").
    public internal(set) var channelNote: String? {
        get { lock.lock(); defer { lock.unlock() }; return channelNoteStorage }
        set { lock.lock(); channelNoteStorage = newValue; lock.unlock() }
    }

    /// Takes ownership of `descriptor` and starts reading it.
    public init(descriptor: Int32, name: String, garbagePolicy: H4Framer.GarbagePolicy = .fail) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw HCITransportError(transport: name, message: "cannot create a wake-up pipe: \(String(cString: strerror(code)))")
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        self.descriptor = descriptor
        self.name = name
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        (incoming, continuation) = AsyncThrowingStream.makeStream(of: TimestampedPacket.self)
        let thread = Thread { [self] in self.readLoop(framer: H4Framer(policy: garbagePolicy)) }
        thread.name = "HCI reader \(name)"
        thread.start()
    }

    deinit { close() }

    public func send(_ packet: HCIPacket) throws {
        let bytes = packet.h4Bytes
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw HCITransportError(transport: name, message: "the transport is closed") }
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN {
                    var pending = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&pending, 1, 1000)
                    continue
                }
                throw HCITransportError(transport: name,
                    message: "writing \(packet.type) failed: \(String(cString: strerror(code))) (errno \(code))")
            }
            written += result
        }
    }

    public func close() {
        lock.lock()
        defer { lock.unlock() }
        closed = true
        // The reader closes the pipe when it exits, under the same lock, so this never writes
        // to a descriptor number that was reused.
        if !readerExited {
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWrite, &byte, 1)
        }
    }

    private func readLoop(framer initial: H4Framer) {
        var framer = initial
        var buffer = [UInt8](repeating: 0, count: 4096)
        var failure: (any Error)?
        reading: while true {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                failure = HCITransportError(transport: name, message: "poll failed: \(String(cString: strerror(errno)))")
                break
            }
            if fds[1].revents != 0 { break }
            if fds[0].revents == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 {
                failure = HCITransportError(transport: name,
                    message: "the controller closed the connection (end of stream); was the controller or emulator stopped?")
                break
            }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                failure = HCITransportError(transport: name,
                    message: "reading failed: \(String(cString: strerror(code))) (errno \(code)); the controller went away")
                break
            }
            let stamp = Self.nowMicroseconds()
            do {
                for packet in try framer.append(buffer[0..<count]) {
                    continuation.yield(TimestampedPacket(microseconds: stamp, direction: .received, packet: packet))
                }
            } catch {
                failure = HCITransportError(transport: name, message: error.description)
                break reading
            }
        }
        lock.lock()
        closed = true
        readerExited = true
        Glibc.close(descriptor)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
        lock.unlock()
        continuation.finish(throwing: failure)
    }

    static func nowMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
