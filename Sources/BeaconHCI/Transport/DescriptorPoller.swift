import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the I/O thread needs from a descriptor it watches. Every call comes from that thread.
protocol PolledDescriptor: AnyObject, Sendable {
    /// The descriptor and the events wanted now, or nil once the owner has been closed (the
    /// poller then calls `release()` and forgets it).
    func interest() -> (descriptor: Int32, events: Int16, deadline: ContinuousClock.Instant?)?
    func handle(events: Int16, now: ContinuousClock.Instant)
    /// Closes the descriptor. Called once, after the last `handle`, so no poll(2) call or read
    /// can reach a descriptor number that was reused.
    func release()
}

/// One thread serves every open transport: it waits in poll(2) for their descriptors and a
/// wake-up pipe, reads what arrives and writes what could not be written at once. However
/// often a scan reconnects, the process holds this one thread for HCI I/O.
final class DescriptorPoller: @unchecked Sendable {
    static let shared = DescriptorPoller()

    private let lock = NSLock()
    private var watched: [ObjectIdentifier: any PolledDescriptor] = [:]
    /// The wake-up pipe, made with the thread on first use; it then lives as long as the process.
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1

    private init() {}

    struct StartFailure: Error {
        var errno: Int32
    }

    /// Starts watching `descriptor` (and starts the thread on first use). Throws the reason
    /// when the thread's wake-up pipe cannot be made (the process is out of descriptors).
    func watch(_ descriptor: any PolledDescriptor) throws(StartFailure) {
        lock.lock()
        let first = wakeRead < 0
        if first {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else {
                let code = errno
                lock.unlock()
                throw StartFailure(errno: code)
            }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
            (wakeRead, wakeWrite) = (ends[0], ends[1])
        }
        watched[ObjectIdentifier(descriptor)] = descriptor
        lock.unlock()
        if first {
            let thread = Thread { [self] in run() }
            thread.start()
        } else {
            wake()
        }
    }

    /// Makes the thread look at every descriptor's interest again (new output, a close).
    func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    private func run() {
        // Named from inside: Foundation does not pass a name set before start() to the kernel,
        // and tools (and tests) find the thread by this name in /proc.
        Thread.current.name = "HCI I/O"
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let snapshot = lock.withLock { Array(watched.values) }
            var active: [any PolledDescriptor] = []
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            var nearest: ContinuousClock.Instant?
            for descriptor in snapshot {
                guard let interest = descriptor.interest() else {
                    lock.withLock { watched[ObjectIdentifier(descriptor)] = nil }
                    descriptor.release()
                    continue
                }
                active.append(descriptor)
                fds.append(pollfd(fd: interest.descriptor, events: interest.events, revents: 0))
                if let deadline = interest.deadline, nearest.map({ deadline < $0 }) ?? true { nearest = deadline }
            }
            let timeout = nearest.map { Self.milliseconds(until: $0) } ?? -1
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR {
                // poll(2) fails only for bad arguments or lack of memory; back off, then retry.
                usleep(10_000)
                continue
            }
            if fds[0].revents != 0 {
                while drain.withUnsafeMutableBytes({ Glibc.read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
            }
            let now = ContinuousClock.now
            for (index, descriptor) in active.enumerated() {
                descriptor.handle(events: fds[index + 1].revents, now: now)
            }
        }
    }

    /// poll(2)'s timeout for `deadline`, rounded up so that the deadline has passed on return.
    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }
}
