import Logging
import NIOCore

/// A connection that ends before its first request head is complete (a port probe, a client
/// giving up, one the ``FirstRequestGuard`` refused) takes NIO's upgrade handler out of the
/// pipeline while it still waits for a request. That fails the upgrade result with
/// `ChannelError.inappropriateOperationForState`, which hummingbird-websocket 2.x logs at error
/// level as "Error handling upgrade result" — for what is a routine end of a connection. The
/// result is internal to hummingbird-websocket, so the server cannot catch it; this handler,
/// given to the upgrade channel only, logs exactly that message at debug level instead and
/// passes every other message on unchanged.
struct RoutineConnectionEndFilter: LogHandler {
    var base: any LogHandler

    static let upgradeFailureMessage = "Error handling upgrade result"
    static let routineErrorDescription = "\(ChannelError.inappropriateOperationForState)"

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    static func isRoutineConnectionEnd(_ event: LogEvent) -> Bool {
        event.message.description == upgradeFailureMessage
            && event.metadata?["error.type"]?.description.contains(routineErrorDescription) == true
    }

    func log(event: LogEvent) {
        guard Self.isRoutineConnectionEnd(event) else {
            base.log(event: event)
            return
        }
        guard base.logLevel <= .debug else { return }
        var demoted = event
        demoted.level = .debug
        demoted.message = "connection closed before its first request"
        base.log(event: demoted)
    }
}
