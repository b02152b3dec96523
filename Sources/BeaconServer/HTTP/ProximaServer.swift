import BeaconGateway
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle

/// The Proxima web service: registry, gateways, sightings in, events out. Build its router for
/// tests (`makeRouter()`), or its application to serve on a port.
public final class ProximaServer: Sendable {
    public let store: Store
    public let configuration: ServerConfiguration
    public let metrics: ServerMetrics
    /// The batch pipeline (Ingest/IngestPipeline.swift); routes post batches into it and reach
    /// the trackers below directly, not through it.
    public let ingestion: IngestService
    /// Seconds since 1970: the server's one clock for what it stores (batches, alerts, requests).
    public let clock: @Sendable () -> Double
    /// Measures what expires or waits (see `init`).
    let intervalClock: any Clock<Duration>
    /// Positions and rooms per site, and survey recordings (Positions/).
    public let positions: PositionTracking
    /// Fleet health, nil with `--no-fleet-checks` (Fleet/).
    public let fleet: FleetTracking?
    /// Spoof and replay checks, nil with `--no-security-checks` (Security/).
    let security: SecurityTracking?
    /// The registry every batch and route reads (Registry/).
    let registry: RegistrySnapshots
    /// The gateway engine's settings (exit rule, beacon limit), which edge gateways must match.
    public let settings: GatewaySettings
    /// Recent events, which live streams read (``EventRing``).
    public let events: EventRing
    /// Rotating identities: the index that maps them to registered beacons (Security/).
    public let rotation: RotationResolver
    /// One-time dashboard sign-in codes (docs/dashboard.md).
    public let signInCodes: SignInCodes
    let limiter: RateLimiter
    let streams: EventStreamLimiter
    /// Reads of streams behind the event ring, shared fairly among tokens (CatchUpReads).
    let catchUp: CatchUpReads
    let authThrottle: AuthFailureThrottle
    let tokenCache: TokenCache
    public let webhooks: WebhookDispatcher
    /// Every stored event goes out through this, once.
    public let publisher: EventPublisher
    let httpClient: HTTPClient
    let passPushes: PassPushService?
    let logger: Logger

    /// - Parameters:
    ///   - intervalClock: what expires or refills with time (remembered tokens, sign-in codes,
    ///     batch and wrong-token allowances) is measured on it.
    ///   - clock: seconds since 1970, for ingestion (sighting time bounds, record times).
    public init(store: Store, configuration: ServerConfiguration = ServerConfiguration(), logger: Logger = Logger(label: "proxima.server"),
                intervalClock: any Clock<Duration> = ContinuousClock(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.store = store
        self.configuration = configuration
        self.intervalClock = intervalClock
        // Several instances share a PostgreSQL database: a token revoked by one must fail at
        // once on all, so none remembers tokens.
        tokenCache = TokenCache(lifetime: store.database.dialect == .postgres ? .zero : .seconds(30), clock: intervalClock)
        signInCodes = SignInCodes(clock: intervalClock)
        let metrics = ServerMetrics()
        self.metrics = metrics
        self.logger = logger
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        self.httpClient = httpClient
        let webhooks = WebhookDispatcher(store: store, client: httpClient, logger: logger,
                                         onDrop: { metrics.webhookDrops.increment(by: Int64($0)) })
        self.webhooks = webhooks
        let events = EventRing(store: store, capacity: configuration.eventRingCapacity, clock: intervalClock,
                               onDatabaseRead: { metrics.eventDatabaseReads.increment() })
        self.events = events
        let publisher = EventPublisher(metrics: metrics, ring: events, webhooks: webhooks, mqtt: configuration.mqtt, logger: logger)
        self.publisher = publisher
        let registry = RegistrySnapshots(store: store, onLoad: { metrics.registryLoads.increment() })
        self.registry = registry
        let rotation = RotationResolver(secret: configuration.secretKey, registry: registry)
        self.rotation = rotation
        self.clock = clock
        let settings = GatewaySettings(exitRule: configuration.exitRule, beaconLimit: configuration.gatewayBeaconLimit)
        self.settings = settings
        let positions = PositionTracking(configuration: configuration.tracking)
        self.positions = positions
        let fleet = configuration.fleetChecks ? FleetTracking(settings: configuration.fleet, clock: clock) : nil
        self.fleet = fleet
        let security = configuration.securityChecks ? SecurityTracking(clock: clock) : nil
        self.security = security
        self.ingestion = IngestService(store: store, instance: configuration.instanceName, settings: settings,
                                       window: configuration.sightingTimeWindow, positions: positions, fleet: fleet, security: security,
                                       rotation: rotation, registry: registry, publisher: publisher, metrics: metrics, clock: clock)
        self.limiter = RateLimiter(rate: configuration.batchesPerSecond, burst: configuration.batchBurst, clock: intervalClock)
        self.streams = EventStreamLimiter(perToken: configuration.maxEventStreamsPerToken, total: configuration.maxEventStreams)
        // SQLite has one connection: one catch-up read at a time leaves it to everyone else in
        // turn, and a quarter of the time keeps ingestion's own reads and writes in front.
        self.catchUp = CatchUpReads(slots: store.database.dialect == .sqlite ? 1 : 2, share: configuration.catchUpShare, clock: intervalClock)
        self.authThrottle = AuthFailureThrottle(burst: configuration.wrongTokenBurst, perMinute: configuration.wrongTokensPerMinute,
                                                clock: intervalClock)
        var passPushes: PassPushService?
        if let passes = configuration.passes {
            do {
                let pusher = try APNsPassPusher(certificatePEM: passes.certificatePEM, privateKeyPEM: passes.privateKeyPEM,
                                                baseURL: passes.apnsURL, trustRoots: passes.apnsTrustRoots)
                passPushes = PassPushService(delivery: PassPushDelivery(store: store, pusher: pusher), logger: logger)
            } catch {
                // The identity already signed passes, so this is TLS refusing the key format:
                // passes still work, only their update pushes do not.
                logger.error("pass update pushes are off: the pass certificate cannot be a TLS client certificate", metadata: ["error": "\(error)"])
            }
        }
        self.passPushes = passPushes
    }

    /// What the server needs running beside its HTTP service, to put before it in a service
    /// group (the webhook client).
    public var services: [any Service] {
        [HTTPClientService(client: httpClient), webhooks, OutboxRetryService(ingestion: ingestion, logger: logger), StreamEndService(server: self)] + (passPushes.map { [$0] } ?? []) + (configuration.mqtt.map { [$0] } ?? [])
    }

    /// Stops outgoing deliveries, for users that run the router without a service group (tests);
    /// the owner closes the database afterwards.
    public func shutdown() async {
        try? await httpClient.shutdown()
        try? await passPushes?.delivery.pusher.shutdown()
    }

    public static var openAPIDocument: String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml", subdirectory: "Resources")
                ?? Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { return "" }
        return text
    }

    public func makeRouter() -> Router<ProximaRequestContext> {
        let router = Router(context: ProximaRequestContext.self)
        router.add(middleware: RequestCountingMiddleware(metrics: metrics))
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: APIErrorMiddleware())
        router.add(middleware: AuthenticationMiddleware(store: store, cache: tokenCache, throttle: authThrottle))
        router.add(middleware: AuditMiddleware(store: store))

        router.get("/health") { [store] _, _ in
            guard let problem = await store.database.probe() else { return try Self.json(["status": "ok", "database": "ok"]) }
            var response = try Self.json(["status": "unhealthy", "database": problem])
            response.status = .serviceUnavailable
            response.headers[.retryAfter] = "\(APIError.retryAfterSeconds)"
            return response
        }
        router.get("/openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: Self.openAPIDocument)))
        }
        router.get("/metrics") { [metrics, fleet] _, _ in
            if let fleet = fleet { metrics.record(fleet.stateCounts()) }
            try await self.recordHelpRequestMetrics()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition() + (await self.queueMetricsText()))))
        }
        addAccessRoutes(to: router)
        addRegistryRoutes(to: router)
        addRotationRoutes(to: router)
        addIngestRoutes(to: router)
        addEventRoutes(to: router)
        addPositionRoutes(to: router)
        addSurveyRoutes(to: router)
        addFleetRoutes(to: router)
        addDeviceRoutes(to: router)
        addDeviceExportRoute(to: router)
        addAuditRoutes(to: router)
        addMessageRoutes(to: router)
        addQueueRoutes(to: router)
        addHelpRequestRoutes(to: router)
        addHuntRoutes(to: router)
        addOfferRoutes(to: router)
        addPassRoutes(to: router)
        addWalletRoutes(to: router)
        addDashboardRoutes(to: router)
        // Last, so that it applies only to requests no route answered.
        router.add(middleware: MethodNotAllowedMiddleware(table: RouteTable(router.routes)))
        return router
    }

    /// The application serving the router (with WebSocket upgrade) on a host and port.
    public func makeApplication(host: String = "127.0.0.1", port: Int = 8080, services: [any Service] = [],
                                onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            server: guardedServer(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "proxima"),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    // MARK: Helpers shared by the route files

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }

    static func text(_ text: String, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = 1024 * 1024) async throws -> T {
        let buffer = try await request.body.collect(upTo: limit)
        guard buffer.readableBytes > 0 else {
            throw APIError(.badRequest, field: "body", "expected a JSON body, found none")
        }
        return try JSONDecoder().decode(T.self, from: buffer)
    }

    static func bodyText(_ request: Request, limit: Int = 4 * 1024 * 1024) async throws -> String {
        let buffer = try await request.body.collect(upTo: limit)
        return String(buffer: buffer)
    }

    static func intParameter(_ context: ProximaRequestContext, _ name: String) throws -> Int {
        guard let text = context.parameters.get(name), let value = Int(text) else {
            throw APIError(.badRequest, field: name, "expected an integer in the path, found '\(context.parameters.get(name) ?? "")'")
        }
        return value
    }

    static func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[Substring(name)].map(String.init)
    }

    /// `?format=csv` or `Accept: text/csv`; any other format than json or csv is refused.
    static func wantsCSV(_ request: Request) throws -> Bool {
        try formatQuery(request, allowed: ["json", "csv"]) == "csv" || request.headers[.accept]?.contains("text/csv") == true
    }

    /// `?format=`, one of the route's formats, or nil when absent.
    static func formatQuery(_ request: Request, allowed: [String]) throws -> String? {
        guard let format = query(request, "format") else { return nil }
        guard allowed.contains(format) else {
            throw APIError(.badRequest, field: "format", "expected \(allowed.joined(separator: " or ")), found '\(format.prefix(40))'")
        }
        return format
    }

    /// A `true`/`false` query parameter, `default` when absent; anything else is refused.
    static func booleanQuery(_ request: Request, _ name: String, default defaultValue: Bool) throws -> Bool {
        switch query(request, name) {
        case nil: defaultValue
        case "true"?: true
        case "false"?: false
        case let other?: throw APIError(.badRequest, field: name, "expected true or false, found '\(other.prefix(40))'")
        }
    }

    static func isCSV(_ request: Request) -> Bool {
        request.headers[.contentType]?.contains("csv") == true
    }
}

struct RequestCountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        metrics.requests.increment()
        return try await next(request, context)
    }
}
