import BeaconGateway
import NIOSSL
import BeaconFleet
import BeaconKit
import BeaconLocate
/// Limits and identity of one server instance.
public struct ServerConfiguration: Sendable {
    /// Names this instance in checkpoints and logs (two instances can share one database).
    public var instanceName: String
    /// HTTPS when set (`--tls-cert`, `--tls-key`); plain HTTP otherwise.
    public var tls: TLSConfiguration?
    public var maxSightingsPerBatch = 5000
    public var maxBatchBytes = 8 * 1024 * 1024
    /// Batches per second per gateway, and the burst allowed above it.
    public var batchesPerSecond: Double = 200
    public var batchBurst: Double = 400
    /// When each gateway's silent beacons exit.
    public var exitRule: ExitRule = .default
    /// The most beacons each gateway's engine keeps (see ``GatewaySettings/beaconLimit``).
    public var gatewayBeaconLimit = GatewaySettings.defaultBeaconLimit
    /// How far sighting times may be from this server's clock.
    public var sightingTimeWindow = SightingTimeWindow.default
    /// How often stream readers look for events stored by other instances.
    public var eventPollInterval: Duration = .milliseconds(250)
    /// Recent events held in memory for live streams; a stream further behind reads the database.
    public var eventRingCapacity = 4_096
    /// An idle Server-Sent Events stream writes a comment line this often: proxies keep it
    /// open, and a failed write is how a departed client's stream is found and its place among
    /// the stream limits given back (within about two intervals).
    public var eventKeepAlive: Duration = .seconds(5)
    /// A stream told to end (its token revoked or expired) writes why and closes at once; one
    /// stuck writing to a client that reads nothing loses its connection at the first sweep
    /// (once a second) this long after.
    public var streamEndGrace: Duration = .milliseconds(500)
    /// A stream whose client has not taken one write for this long is closed (it resumes with
    /// `Last-Event-ID`): what it cannot send waits in a bounded buffer, not in the server.
    public var slowReaderTimeout: Duration = .seconds(10)
    /// The most of the database's time (and the CPU that encodes what they read) that streams
    /// catching up from an old id take, all together (CatchUpReads).
    public var catchUpShare = 0.25
    /// A new connection must deliver its first complete request head (request line and
    /// headers) within this time, or it is answered 408 and closed.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// A request whose head has arrived must be complete (its whole body) within this time,
    /// or its connection is closed: a body trickled slowly (slowloris) does not hold it.
    public var requestTimeout: Duration = .seconds(120)
    /// A connection with no request in progress, or one whose next request stops arriving part
    /// way, is closed after this long without a complete request part.
    public var idleTimeout: Duration = .seconds(30)
    /// Largest request head in bytes; a larger one is answered 431 and the connection closed.
    public var maxHeaderBytes = 16 * 1024
    /// Event streams (SSE and the event socket) one token may hold open at once; one more is
    /// answered 429 naming `streams` (`--max-streams-per-token`).
    public var maxEventStreamsPerToken = 64
    /// Event streams the server holds open in all; one more is answered 503 (`--max-streams`).
    public var maxEventStreams = 1024
    /// Wrong tokens one client address may send in a burst, and how many a minute after it;
    /// past them its unknown tokens are answered 429 without a lookup (AuthFailureThrottle).
    public var wrongTokenBurst = 20
    public var wrongTokensPerMinute = 30
    /// Positions and rooms per site: cycle, subject cap, calibration interval, room presence.
    public var tracking = SiteTracker.Configuration()
    /// Fleet health (Fleet/): run the checks on every batch and once a second; off only to
    /// measure what they cost.
    public var fleetChecks = true
    public var fleet = FleetSettings()
    /// Spoof and replay detection (Security/, `--no-security-checks` turns it off): a detector
    /// per site on every sighting, its alerts stored as fleet alerts.
    public var securityChecks = true
    /// Bounds of devices and messages of the day (Apps/).
    public var apps = AppLimits()
    /// Wallet passes: the signing identity and public URL; nil answers the pass endpoints 503.
    public var passes: PassServiceConfiguration?
    /// Seals stored secrets such as rotation keys (`--secret-key-file`); without it the server
    /// refuses to store rotation keys.
    public var secretKey: ServerSecret?
    /// Publishes every stored event to an MQTT broker (`--mqtt`); a service of the server's group.
    public var mqtt: ServerMQTTOutput?

    public init(instanceName: String = "proxima") {
        self.instanceName = instanceName
    }
}
