import BeaconKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HCI transport over a file descriptor that carries H4: a unix stream socket, a serial
/// device, or a Linux HCI socket (whose reads each hold one H4-typed packet).
///
/// The descriptor is non-blocking, and no thread ever waits on it alone: the process's one HCI
/// I/O thread (`DescriptorPoller`) reads it and finishes writes the kernel could not take at
/// once, while `send` awaits without holding a thread. A controller that stops reading fails
/// the link after `writeTimeout` with an error that says so, and `close()` never waits.
public final class FileDescriptorTransport: HCITransport, PolledDescriptor, @unchecked Sendable {
    public let name: String
    public let incoming: AsyncThrowingStream<TimestampedPacket, any Error>
    /// How long queued output may wait for the controller to read before the link fails.
    public let writeTimeout: Duration

    private let descriptor: Int32
    private let isSocket: Bool
    private let continuation: AsyncThrowingStream<TimestampedPacket, any Error>.Continuation
    private let poller = DescriptorPoller.shared

    /// Guards `state`, `pendingOutput`, `lastProgress` and `channelNoteStorage`. Held only around non-blocking
    /// calls; the descriptor is closed under it, so a write never reaches a reused number.
    private let lock = NSLock()
    private var state = State.open
    private var pendingOutput: [PendingWrite] = []
    private var channelNoteStorage: String?

    /// Used by the I/O thread only.
    private var framer: H4Framer
    private var readBuffer = [UInt8](repeating: 0, count: 4096)

    private enum State {
        case open
        /// Closed by the host (no error) or failed; the I/O thread has not released it yet.
        case closing((any Error)?)
        case released
    }

    private struct PendingWrite {
        var bytes: [UInt8]
        var written: Int
        var what: String
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// When the controller last took bytes while output was waiting.
    private var lastProgress = ContinuousClock.now

    /// For an HCI socket, which channel it got ("user channel" or "raw channel").
    public internal(set) var channelNote: String? {
        get { lock.withLock { channelNoteStorage } }
        set { lock.withLock { channelNoteStorage = newValue } }
    }

    /// Takes ownership of `descriptor`, makes it non-blocking and starts reading it.
    public init(descriptor: Int32, name: String, garbagePolicy: H4Framer.GarbagePolicy = .fail,
                writeTimeout: Duration = .seconds(2)) throws {
        self.descriptor = descriptor
        self.name = name
        self.writeTimeout = writeTimeout
        framer = H4Framer(policy: garbagePolicy)
        var status = stat()
        isSocket = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK
        (incoming, continuation) = AsyncThrowingStream.makeStream(of: TimestampedPacket.self)
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw HCITransportError(transport: name, message: "cannot make the descriptor non-blocking: \(Self.describe(errno: code))")
        }
        do {
            try poller.watch(self)
        } catch {
            Glibc.close(descriptor)
            throw HCITransportError(transport: name, message: "cannot start HCI I/O: \(Self.describe(errno: error.errno))")
        }
    }

    public var isSharedWithKernel: Bool { channelNote == "raw channel" }

    /// Returns once the kernel has taken the whole packet.
    public func send(_ packet: HCIPacket) async throws {
        try await write(packet.h4Bytes, what: "\(packet.type)")
    }

    /// Writes bytes as they are, with no framing: for test controllers that send partial
    /// packets or garbage.
    public func writeRaw(_ bytes: [UInt8]) async throws {
        try await write(bytes, what: "\(bytes.count) raw bytes")
    }

    private func write(_ bytes: [UInt8], what: String) async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            lock.lock()
            guard case .open = state else {
                lock.unlock()
                waiter.resume(throwing: HCITransportError(transport: name, message: "the transport is closed"))
                return
            }
            var pending = PendingWrite(bytes: bytes, written: 0, what: what, continuation: waiter)
            // Output already waiting goes first, so packets never interleave.
            if pendingOutput.isEmpty {
                switch writeAvailable(&pending) {
                case .finished:
                    lock.unlock()
                    waiter.resume()
                    return
                case .failed(let error):
                    state = .closing(error)
                    let stranded = pendingOutput
                    pendingOutput = []
                    lock.unlock()
                    for other in stranded { other.continuation.resume(throwing: error) }
                    waiter.resume(throwing: error)
                    poller.wake()
                    return
                case .wouldBlock:
                    lastProgress = ContinuousClock.now
                }
            }
            pendingOutput.append(pending)
            lock.unlock()
            poller.wake()
        }
    }

    private enum WriteOutcome {
        case finished
        case wouldBlock
        case failed(HCITransportError)
    }

    /// Writes what the kernel takes now, without waiting. Called with the lock held.
    private func writeAvailable(_ pending: inout PendingWrite) -> WriteOutcome {
        while pending.written < pending.bytes.count {
            let result = pending.bytes[pending.written...].withUnsafeBytes { chunk in
                // MSG_NOSIGNAL: a peer that went away is an error to report, not a SIGPIPE.
                isSocket ? Glibc.send(descriptor, chunk.baseAddress, chunk.count, Int32(MSG_NOSIGNAL))
                    : Glibc.write(descriptor, chunk.baseAddress, chunk.count)
            }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
                return .failed(HCITransportError(transport: name,
                    message: "writing \(pending.what) failed after \(pending.written) of \(pending.bytes.count) bytes: \(Self.describe(errno: code))"))
            }
            pending.written += result
        }
        return .finished
    }

    public func close() {
        fail(nil)
    }

    /// Stops the link: waiting writes fail, and the I/O thread closes the descriptor and
    /// finishes `incoming` (with `error`, or without one when the host closed it).
    private func fail(_ error: (any Error)?) {
        lock.lock()
        guard case .open = state else {
            lock.unlock()
            return
        }
        state = .closing(error)
        let stranded = pendingOutput
        pendingOutput = []
        lock.unlock()
        let reason = error ?? HCITransportError(transport: name, message: "the transport was closed before the controller took the bytes")
        for pending in stranded { pending.continuation.resume(throwing: reason) }
        poller.wake()
    }

    // MARK: the I/O thread's side

    func interest() -> (descriptor: Int32, events: Int16, deadline: ContinuousClock.Instant?)? {
        lock.withLock {
            guard case .open = state else { return nil }
            if pendingOutput.isEmpty { return (descriptor, Int16(POLLIN), nil) }
            return (descriptor, Int16(POLLIN | POLLOUT), lastProgress.advanced(by: writeTimeout))
        }
    }

    func handle(events: Int16, now: ContinuousClock.Instant) {
        if events & Int16(POLLOUT | POLLERR | POLLHUP) != 0 { flushPendingOutput() }
        if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 { readAvailable() }
        checkWriteDeadline(now: now)
    }

    func release() {
        let error: (any Error)? = lock.withLock {
            defer { state = .released }
            // A terminal's close waits for its output to drain; on a failed link (the usual
            // cause: flow control holding the line) that wait could hold this thread for 30 s.
            if !isSocket, case .closing(.some) = state { tcflush(descriptor, TCOFLUSH) }
            Glibc.close(descriptor)
            if case .closing(let error) = state { return error }
            return nil
        }
        continuation.finish(throwing: error)
    }

    private func flushPendingOutput() {
        var finished: [CheckedContinuation<Void, any Error>] = []
        var failure: HCITransportError?
        lock.withLock {
            guard case .open = state else { return }
            while !pendingOutput.isEmpty {
                let before = pendingOutput[0].written
                let outcome = writeAvailable(&pendingOutput[0])
                if pendingOutput[0].written > before { lastProgress = ContinuousClock.now }
                switch outcome {
                case .finished: finished.append(pendingOutput.removeFirst().continuation)
                case .wouldBlock: return
                case .failed(let error):
                    failure = error
                    return
                }
            }
        }
        for waiter in finished { waiter.resume() }
        if let failure { fail(failure) }
    }

    private func checkWriteDeadline(now: ContinuousClock.Instant) {
        let stalled: (bytes: Int, what: String)? = lock.withLock {
            guard case .open = state, let first = pendingOutput.first, now >= lastProgress.advanced(by: writeTimeout) else { return nil }
            return (pendingOutput.reduce(0) { $0 + $1.bytes.count - $1.written }, first.what)
        }
        guard let stalled else { return }
        fail(HCITransportError(transport: name,
            message: "the controller stopped reading: \(stalled.bytes) bytes (first a \(stalled.what)) waited \(writeTimeout) "
                + "for it to take them; is it hung, or is flow control (RTS/CTS) holding the line?"))
    }

    private func readAvailable() {
        guard lock.withLock({ if case .open = state { true } else { false } }) else { return }
        let count = readBuffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 {
            fail(HCITransportError(transport: name,
                message: "the controller closed the connection (end of stream); was the controller or emulator stopped?"))
            return
        }
        if count < 0 {
            let code = errno
            if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { return }
            fail(HCITransportError(transport: name, message: "reading failed: \(Self.describe(errno: code)); the controller went away"))
            return
        }
        let stamp = Self.nowMicroseconds()
        do {
            for packet in try framer.append(readBuffer[0..<count]) {
                continuation.yield(TimestampedPacket(microseconds: stamp, direction: .received, packet: packet))
            }
        } catch {
            for packet in error.completedPackets {
                continuation.yield(TimestampedPacket(microseconds: stamp, direction: .received, packet: packet))
            }
            fail(HCITransportError(transport: name, message: error.description))
        }
    }

    static func describe(errno code: Int32) -> String { "\(String(cString: strerror(code))) (errno \(code))" }

    static func nowMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
