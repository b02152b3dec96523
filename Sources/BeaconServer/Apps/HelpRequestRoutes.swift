import BeaconKit
import Foundation
import Hummingbird
import NIOCore
import Prometheus
import ServiceLifecycle

/// Who is asking about a help request, once the token was checked.
enum HelpCaller: Sendable {
    /// An admin, operator or read-only token.
    case staff(Principal)
    /// The visitor's own phone.
    case visitor(deviceID: String)
    /// A phone registered as a helper of the request's site.
    case helper(deviceID: String, name: String)
}

extension ProximaServer {
    /// Wakes help-request streams on this instance when a route changed a request; changes
    /// made by ingestion (distances, reached) and by other instances arrive by polling.
    static let helpSignal = EventSignal()

    func addHelpRequestRoutes(to router: Router<ProximaRequestContext>) {
        let limits = HelpRequestLimits()
        router.post("/v1/help-requests") { [store] request, context in
            let deviceID = try Self.visitorDevice(context)
            let body = try await Self.decode(NewHelpRequest.self, from: request, limit: 4 * 1024)
            let filed = try await store.fileHelpRequest(deviceID: deviceID, body, limits: limits, now: self.clock())
            await Self.helpSignal.notify()
            return try Self.json(filed, status: .created)
        }
        router.get("/v1/help-requests") { [store] request, context in
            let site = try await self.helpListSite(request, context: context)
            let state = try Self.helpStateQuery(request)
            let limit = try Self.optionalIntQuery(request, "limit") ?? 100
            guard (1...limits.listLimit).contains(limit) else {
                throw APIError(.badRequest, field: "limit", "expected 1…\(limits.listLimit), found \(limit)")
            }
            return try Self.json(try await store.helpRequests(siteID: site, state: state, limit: limit))
        }
        router.get("/v1/help-requests/events") { request, context in
            let site = try await self.helpListSite(request, context: context)
            // The queue's stream starts at its newest change unless asked to replay (`after`,
            // `Last-Event-ID`), so opening it never reads the whole history.
            let replays = Self.query(request, "after") != nil || request.headers.contains { $0.name.canonicalName == "last-event-id" }
            let start = replays ? try Self.startingID(request) : try await self.store.latestHelpChange()
            return try self.helpStream(request, after: start, requestID: nil, siteID: site, lease: try self.openStream(context))
        }
        router.get("/v1/help-requests/metrics") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.helpMetrics(siteID: try Self.optionalIntQuery(request, "site")))
        }
        router.get("/v1/help-requests/:id") { [store] _, context in
            let id = try Self.intParameter(context, "id")
            _ = try await self.helpCaller(for: id, context: context, permission: .read)
            return try Self.json(try await store.helpRequest(id: id))
        }
        router.get("/v1/help-requests/:id/events") { request, context in
            let id = try Self.intParameter(context, "id")
            _ = try await self.helpCaller(for: id, context: context, permission: .read)
            return try self.helpStream(request, after: try Self.startingID(request), requestID: id, siteID: nil, lease: try self.openStream(context))
        }
        router.post("/v1/help-requests/:id/acknowledge") { [store] _, context in
            let id = try Self.intParameter(context, "id")
            let helper: HelpHelper = switch try await self.helpCaller(for: id, context: context, permission: .operate) {
            case .staff(let principal): HelpHelper(id: "token-\(principal.tokenID)", name: principal.name, deviceID: nil)
            case .helper(let deviceID, let name): HelpHelper(id: "device-\(deviceID)", name: name, deviceID: deviceID)
            case .visitor: throw APIError(.forbidden, field: "Authorization", "the visitor's own phone cannot acknowledge its request; a helper's phone or staff does")
            }
            let acknowledged = try await store.acknowledgeHelpRequest(id: id, helper: helper, now: self.clock())
            await Self.helpSignal.notify()
            return try Self.json(acknowledged)
        }
        router.post("/v1/help-requests/:id/reached") { [store] _, context in
            let id = try Self.intParameter(context, "id")
            try await self.requireAcknowledgingHelper(id, context: context)
            let reached = try await store.reachHelpRequest(id: id, by: "helper", now: self.clock())
            await Self.helpSignal.notify()
            return try Self.json(reached)
        }
        router.post("/v1/help-requests/:id/done") { [store] _, context in
            let id = try Self.intParameter(context, "id")
            try await self.requireAcknowledgingHelper(id, context: context)
            let done = try await store.finishHelpRequest(id: id, as: .done, now: self.clock())
            await Self.helpSignal.notify()
            return try Self.json(done)
        }
        router.post("/v1/help-requests/:id/cancel") { [store] _, context in
            let id = try Self.intParameter(context, "id")
            if case .helper = try await self.helpCaller(for: id, context: context, permission: .operate) {
                throw APIError(.forbidden, field: "Authorization", "a helper's phone cannot cancel a visitor's request; the visitor or staff can")
            }
            let cancelled = try await store.finishHelpRequest(id: id, as: .cancelled, now: self.clock())
            await Self.helpSignal.notify()
            return try Self.json(cancelled)
        }
        router.get("/v1/help-helpers") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.helpers(siteID: try Self.optionalIntQuery(request, "site")))
        }
        router.put("/v1/help-helpers/:id") { [store] _, context in
            try context.require(.operate)
            return try Self.json(try await store.addHelper(deviceID: try Self.deviceID(context), now: self.clock()))
        }
        router.delete("/v1/help-helpers/:id") { [store] _, context in
            try context.require(.operate)
            try await store.removeHelper(deviceID: try Self.deviceID(context))
            return Response(status: .noContent)
        }
    }

    // MARK: Access

    /// Only a phone files a request for itself.
    static func visitorDevice(_ context: ProximaRequestContext) throws -> String {
        guard let principal = context.principal else { return try context.require(.ingest).gatewayID ?? "" }
        guard principal.role == .device, let deviceID = principal.gatewayID else {
            throw APIError(.forbidden, field: "Authorization", "the token's role '\(principal.role.rawValue)' may not do this; a help request is filed by the visitor's phone with its device token")
        }
        return deviceID
    }

    /// Staff (read roles; `operate` also needs admin or operator), the visitor's own phone, or a
    /// helper phone of the request's site.
    func helpCaller(for id: Int, context: ProximaRequestContext, permission: ProximaRequestContext.Permission) async throws -> HelpCaller {
        guard let principal = context.principal, principal.role == .device, let deviceID = principal.gatewayID else {
            return .staff(try context.require(permission))
        }
        let request = try await store.helpRequest(id: id)
        if request.deviceID == deviceID { return .visitor(deviceID: deviceID) }
        if try await store.helperSite(deviceID: deviceID) == request.siteID {
            let device = try await store.device(id: deviceID)
            return .helper(deviceID: deviceID, name: device.name ?? Device.gatewayName(id: deviceID))
        }
        throw APIError(.forbidden, field: "id", "a device token may only touch its own help request, or the requests of the site it is a helper of")
    }

    /// Reached and done come from staff (admin, operator) or the helper phone that acknowledged.
    func requireAcknowledgingHelper(_ id: Int, context: ProximaRequestContext) async throws {
        switch try await helpCaller(for: id, context: context, permission: .operate) {
        case .staff: return
        case .visitor:
            throw APIError(.forbidden, field: "Authorization", "the visitor's own phone cannot mark its request; the helper does")
        case .helper(let deviceID, _):
            let request = try await store.helpRequest(id: id)
            guard request.helper?.deviceID == deviceID else {
                throw APIError(.forbidden, field: "id", "help request \(id) was acknowledged by another helper")
            }
        }
    }

    /// The site a list or stream covers: `?site=` for staff; a helper phone's own site.
    func helpListSite(_ request: Request, context: ProximaRequestContext) async throws -> Int? {
        let site = try Self.optionalIntQuery(request, "site")
        guard let principal = context.principal, principal.role == .device, let deviceID = principal.gatewayID else {
            try context.require(.read)
            return site
        }
        guard let helperSite = try await store.helperSite(deviceID: deviceID) else {
            throw APIError(.forbidden, field: "Authorization", "this device is not a helper; only helpers' phones and staff see the queue")
        }
        if let site, site != helperSite {
            throw APIError(.forbidden, field: "site", "a helper's phone sees its own site's requests only (site \(helperSite))")
        }
        return helperSite
    }

    static func helpStateQuery(_ request: Request) throws -> HelpRequestState? {
        guard let text = query(request, "state") else { return nil }
        guard let state = HelpRequestState(rawValue: text) else {
            throw APIError(.badRequest, field: "state", "expected one of \(HelpRequestState.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text.prefix(40))'")
        }
        return state
    }

    // MARK: Streams

    /// `text/event-stream` of changes (`id:` the change id, `event:` its kind, `data:` the
    /// change with the request as it became) after the change `after`; it follows until the
    /// client goes, or with `?follow=false` ends once caught up.
    func helpStream(_ request: Request, after: Int, requestID: Int?, siteID: Int?, lease: EventStreamLease) throws -> Response {
        let follow = try Self.booleanQuery(request, "follow", default: true)
        let store = self.store
        let pollInterval = configuration.eventPollInterval
        let keepAliveInterval = configuration.eventKeepAlive
        let clock = self.clock
        let body = ResponseBody { writer in
            defer { withExtendedLifetime(lease) {} }
            let end = lease.end
            var last = after
            var keepAlive = StreamKeepAlive(interval: keepAliveInterval)
            // A following stream ends when the server shuts down (checked each poll), rather than
            // holding the shutdown until its client's departure shows on a keep-alive write.
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                if let reason = end.reason(now: clock()) {
                    try await writer.write(ByteBuffer(string: Self.endEvent(reason)))
                    break
                }
                let changes = try await store.helpChanges(after: last, requestID: requestID, siteID: siteID)
                if !changes.isEmpty {
                    var text = ""
                    for change in changes {
                        text += "id: \(change.id)\nevent: \(change.kind)\ndata: \(String(decoding: try Self.encoder.encode(change), as: UTF8.self))\n\n"
                    }
                    try await end.writing(now: clock()) { try await writer.write(ByteBuffer(string: text)) }
                    last = changes[changes.count - 1].id
                    keepAlive.wrote()
                    continue
                }
                guard follow else { break }
                if keepAlive.isDue() { try await end.writing(now: clock()) { try await writer.write(ByteBuffer(string: StreamKeepAlive.comment)) } }
                await Self.helpSignal.wait(timeout: end.wait(atMost: pollInterval, now: clock()))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    // MARK: Prometheus

    /// Sets the help-request gauges from the running totals, per site, when `/metrics` is read.
    func recordHelpRequestMetrics() async throws {
        let figures = try await store.helpMetrics(siteID: nil)
        let registry = metrics.registry
        for site in figures.sites {
            let label = ("site", String(site.siteID))
            for (outcome, count) in [("filed", site.filed), ("acknowledged", site.acknowledged), ("reached", site.reached),
                                     ("done", site.done), ("cancelled", site.cancelled)] {
                registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "proxima_help_requests", unitName: "", helpText: "help requests per site that reached each outcome"), labels: [label, ("outcome", outcome)]).set(Double(count))
            }
            if let seconds = site.meanSecondsToAcknowledge {
                registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "proxima_help_acknowledge_seconds_mean", unitName: "", helpText: "mean seconds from filed to acknowledged"), labels: [label]).set(seconds)
            }
            if let seconds = site.meanSecondsToReach {
                registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "proxima_help_reach_seconds_mean", unitName: "", helpText: "mean seconds from acknowledged to reached"), labels: [label]).set(seconds)
            }
            if let rate = site.successRate {
                registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "proxima_help_success_ratio", unitName: "", helpText: "done / (done + cancelled) of finished help requests"), labels: [label]).set(rate)
            }
        }
    }
}
