import Foundation
import Hummingbird

extension ProximaServer {
    func addQueueRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/queues") { [store] request, context in
            try context.require(.operate)
            let body = try await Self.decode(NewQueue.self, from: request, limit: 16 * 1024)
            return try Self.json(try await store.createQueue(body, now: self.clock()), status: .created)
        }
        router.get("/v1/queues") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.queues(siteID: try Self.optionalIntQuery(request, "site")))
        }
        router.get("/v1/queues/:id") { [store] request, context in
            let id = try Self.intParameter(context, "id")
            try await self.requireQueueRead(id, context: context)
            var hours = 24
            if let text = Self.query(request, "hours") {
                guard let value = Int(text), QueueLimits.reportHours.contains(value) else {
                    throw APIError(.badRequest, field: "hours",
                                   "expected an integer in \(QueueLimits.reportHours.lowerBound)…\(QueueLimits.reportHours.upperBound), found '\(text.prefix(40))'")
                }
                hours = value
            }
            return try Self.json(try await store.queueReport(id: id, hours: hours, now: self.clock()))
        }
        router.delete("/v1/queues/:id") { [store] _, context in
            try context.require(.operate)
            try await store.deleteQueue(id: try Self.intParameter(context, "id"))
            return Response(status: .noContent)
        }

        router.put("/v1/checkin-zones/:zoneID") { [store] request, context in
            try context.require(.operate)
            let zoneID = try Self.intParameter(context, "zoneID")
            let body = try await Self.decode(CheckinZoneRule.self, from: request, limit: 16 * 1024)
            return try Self.json(try await store.setCheckinZone(zoneID: zoneID, rule: body, now: self.clock()))
        }
        router.get("/v1/checkin-zones") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.checkinZones(siteID: try Self.optionalIntQuery(request, "site")))
        }
        router.get("/v1/checkin-zones/:zoneID") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.checkinZone(zoneID: try Self.intParameter(context, "zoneID")))
        }
        router.delete("/v1/checkin-zones/:zoneID") { [store] _, context in
            try context.require(.operate)
            try await store.deleteCheckinZone(zoneID: try Self.intParameter(context, "zoneID"))
            return Response(status: .noContent)
        }
        router.get("/v1/devices/:id/checkins") { [store] request, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id, operatorsNeed: .read)
            var limit = 100
            if let text = Self.query(request, "limit") {
                guard let value = Int(text), QueueLimits.checkinPage.contains(value) else {
                    throw APIError(.badRequest, field: "limit",
                                   "expected an integer in \(QueueLimits.checkinPage.lowerBound)…\(QueueLimits.checkinPage.upperBound), found '\(text.prefix(40))'")
                }
                limit = value
            }
            return try Self.json(try await store.checkins(deviceID: id, limit: limit))
        }
    }

    /// Readers may read any queue; a device the queues of its own site, whose waits it is
    /// published for.
    func requireQueueRead(_ id: Int, context: ProximaRequestContext) async throws {
        guard let principal = context.principal, principal.role == .device, let deviceID = principal.gatewayID else {
            try context.require(.read)
            return
        }
        let device = try await store.device(id: deviceID)
        let queue = try await store.queue(id: id)
        guard queue.siteID == device.siteID else {
            throw APIError(.forbidden, field: "id", "a device may read the queues of its own site only")
        }
    }

    /// Queue gauges for `/metrics`, in the Prometheus text format: each queue's people waiting,
    /// the p50 and p90 wait of the last 15 minutes, and those served and abandoned in them.
    func queueMetricsText() async -> String {
        guard let reports = try? await store.queueReports(now: clock()), !reports.isEmpty else { return "" }
        var lines = [
            "# HELP proxima_queue_waiting devices waiting in the queue now",
            "# TYPE proxima_queue_waiting gauge",
        ]
        for report in reports { lines.append("proxima_queue_waiting{queue=\"\(report.queue.id)\"} \(report.live.waiting)") }
        lines += ["# HELP proxima_queue_wait_seconds wait from entry to service over the last 15 minutes",
                  "# TYPE proxima_queue_wait_seconds gauge"]
        for report in reports {
            for (quantile, value) in [("0.5", report.last15Minutes.p50), ("0.9", report.last15Minutes.p90)] {
                guard let value else { continue }
                lines.append("proxima_queue_wait_seconds{queue=\"\(report.queue.id)\",quantile=\"\(quantile)\"} \(value)")
            }
        }
        lines += ["# HELP proxima_queue_served_15m devices served in the last 15 minutes", "# TYPE proxima_queue_served_15m gauge"]
        for report in reports { lines.append("proxima_queue_served_15m{queue=\"\(report.queue.id)\"} \(report.last15Minutes.served)") }
        lines += ["# HELP proxima_queue_abandoned_15m devices that left without service in the last 15 minutes",
                  "# TYPE proxima_queue_abandoned_15m gauge"]
        for report in reports { lines.append("proxima_queue_abandoned_15m{queue=\"\(report.queue.id)\"} \(report.last15Minutes.abandoned)") }
        return lines.joined(separator: "\n") + "\n"
    }
}
