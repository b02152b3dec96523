import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as an async stream, so commands can stop cleanly (disable advertising or
/// scanning) instead of dying with the controller still busy.
enum ProcessSignals {
    static func stream(_ numbers: [Int32] = [SIGINT, SIGTERM]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = SignalSources(numbers.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            })
            continuation.onTermination = { _ in sources.cancel() }
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

/// Dispatch sources are thread-safe to cancel; this box lets the stream's termination do it.
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { for source in sources { source.cancel() } }
}
