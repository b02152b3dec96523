import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as an async stream, so commands can stop cleanly (disable advertising or
/// scanning, publish `offline`) instead of dying with the controller still busy.
///
/// Not a Dispatch signal source: on Linux those read a `signalfd`, which sees a signal only
/// while it is blocked, and they leave it ignored (`SIG_IGN`) for every thread that does not
/// block it. Started from a shell, the main thread blocks nothing, so the kernel discarded the
/// signal as ignored and `proxima gateway` ran on after SIGTERM and SIGINT. (Started from a
/// test's Foundation `Process`, the child inherited a mask that blocked both, which hid this.)
/// A plain handler writing to a pipe works either way: a relay thread that unblocks the two
/// signals reads the pipe and tells every listening stream.
enum ProcessSignals {
    static func stream(_ numbers: [Int32] = [SIGINT, SIGTERM]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let listener = SignalRelay.shared.listen(Set(numbers), continuation)
            continuation.onTermination = { _ in SignalRelay.shared.stopListening(listener) }
        }
    }

    static func name(_ number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(number)"
        }
    }
}

/// The write end of the relay's pipe; set once, before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Only async-signal-safe work: one byte naming the signal into the pipe.
private let relayHandler: @convention(c) (Int32) -> Void = { number in
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWriteEnd, &byte, 1)
}

private final class SignalRelay: @unchecked Sendable {
    static let shared = SignalRelay()

    private let lock = NSLock()
    private var listeners: [Int: (numbers: Set<Int32>, continuation: AsyncStream<Int32>.Continuation)] = [:]
    private var nextListener = 0

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fatalError("pipe failed: errno \(errno)") }
        // Not inherited by the programs a command starts.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        signalPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        let thread = Thread { [self] in
            // Some thread must take the signals even when the process inherited a mask that
            // blocks them: this one.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGINT)
            sigaddset(&unblocked, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    deliver(Int32(byte))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        thread.name = "proxima signals"
        thread.start()
    }

    /// Installs the handler for `numbers` (again: a command that took its first signal may
    /// have set the default action back, so that a second one ends the process at once).
    func listen(_ numbers: Set<Int32>, _ continuation: AsyncStream<Int32>.Continuation) -> Int {
        lock.withLock {
            for number in numbers { signal(number, relayHandler) }
            nextListener += 1
            listeners[nextListener] = (numbers, continuation)
            return nextListener
        }
    }

    /// A signal nobody listens for any more gets its default action back, rather than being
    /// swallowed by a handler that tells no one.
    func stopListening(_ listener: Int) {
        lock.withLock {
            guard let removed = listeners.removeValue(forKey: listener) else { return }
            let stillHeard = listeners.values.reduce(into: Set<Int32>()) { $0.formUnion($1.numbers) }
            for number in removed.numbers.subtracting(stillHeard) { signal(number, SIG_DFL) }
        }
    }

    private func deliver(_ number: Int32) {
        let receivers = lock.withLock { listeners.values.filter { $0.numbers.contains(number) }.map(\.continuation) }
        for continuation in receivers { continuation.yield(number) }
    }
}
