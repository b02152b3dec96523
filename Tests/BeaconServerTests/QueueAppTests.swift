import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 13 items 4 and 5 on the server: check-ins once per visit with loyalty counts, and queue
/// waits and abandonment, fed by devices' batches through the router, idempotent under retried
/// and late batches; every route's roles and refusals.
@Suite("Check-ins and queues")
struct QueueAppTests {
    /// A second zone (the restroom, minor 2001) for the queue's service.
    static func restroom(_ app: AppsHarness) async throws -> (zoneID: Int, identity: BeaconIdentity) {
        let beacon = try await app.server.store.addBeacon(NewBeacon(siteID: app.office.site.id, category: 2, label: "Restroom",
                                                                    position: Position(x: 30, y: 8), installedOn: "2014-03-01", state: .deployed))
        let zone = try #require(try await app.server.store.zones(siteID: app.office.site.id).first { $0.minor == beacon.minor })
        return (zone.id, beacon.identity)
    }

    func checkins(_ app: AppsHarness, _ device: Device, token: String) async throws -> DeviceCheckins {
        let response = try await app.call(.get, "/v1/devices/\(device.id)/checkins", token: token)
        try #require(response.status == .ok, "\(response.status) \(response.text)")
        return try response.json(DeviceCheckins.self)
    }

    @Test func aDeviceChecksInOncePerVisitWhateverBatchesAreRetriedOrLate() async throws {
        try await AppsHarness.with { app in
            let rule = try await app.call(.put, "/v1/checkin-zones/\(app.zoneID)", as: .operator, json: #"{"dwell":60,"absence":600}"#)
            #expect(rule.status == .ok, "\(rule.text)")
            let (device, token) = try await app.register()
            let t0 = AppsHarness.monday
            try await app.post(heard: app.mordor, at: t0, token: token, sequence: 1)
            try await app.post(heard: app.mordor, at: t0 + 30, token: token, sequence: 2)
            #expect(try await checkins(app, device, token: token).checkins.isEmpty, "30 s is not yet the dwell")
            try await app.post(heard: app.mordor, at: t0 + 70, token: token, sequence: 3)
            var seen = try await checkins(app, device, token: token)
            #expect(seen.checkins.count == 1)
            let first = try #require(seen.checkins.first)
            #expect(first.zoneID == app.zoneID && abs(first.time - (first.visitStart + 60)) < 1e-6)

            // The same batch again, a later one, then the first one's retry after it: all counted once.
            #expect(try await app.post(heard: app.mordor, at: t0 + 70, token: token, sequence: 3).status == .accepted)
            try await app.post(heard: app.mordor, at: t0 + 90, token: token, sequence: 5)
            try await app.post(heard: app.mordor, at: t0 + 80, token: token, sequence: 4)
            try await app.post(heard: app.mordor, at: t0 + 70, token: token, sequence: 3)
            seen = try await checkins(app, device, token: token)
            #expect(seen.checkins.count == 1)
            #expect(seen.loyalty.map(\.count) == [1])

            // Away (another beacon heard) for longer than the absence, then back: a second visit.
            let elsewhere = BeaconIdentity(uuid: app.mordor.uuid, major: app.mordor.major, minor: 4242)
            for (index, offset) in [200.0, 500, 900, 1_300].enumerated() {
                try await app.post(heard: elsewhere, at: t0 + offset, token: token, sequence: 10 + index)
            }
            for (index, offset) in [1_400.0, 1_420, 1_440, 1_470].enumerated() {
                try await app.post(heard: app.mordor, at: t0 + offset, token: token, sequence: 20 + index)
            }
            seen = try await checkins(app, device, token: token)
            #expect(seen.checkins.count == 2)
            #expect(seen.loyalty == [DeviceCheckins.Loyalty(zoneID: app.zoneID, count: 2, last: try #require(seen.checkins.first).time)])
            #expect(seen.checkins.first!.time > seen.checkins.last!.time, "newest first")

            // Each check-in is an event on the stream, once, whatever was retried, with its
            // zone's region, so `?region=` finds it.
            let stream = try await app.call(.get, "/v1/events?follow=false", as: .readOnly).text
            #expect(stream.components(separatedBy: "event: checkIn\n").count - 1 == 2, "\(stream)")
            let region = "\(app.mordor.uuid.uuidString):\(app.mordor.major):\(app.mordor.minor)"
            let listed = try await app.call(.get, "/v1/events?format=json&limit=1000&region=\(region)", as: .readOnly).json([StoredEvent].self)
            let checkIns = listed.compactMap(\.application).filter { $0.kind == .checkIn }
            #expect(checkIns.map(\.visitStart) == seen.checkins.reversed().map(\.visitStart))
            #expect(checkIns.allSatisfy { $0.device == device.id && $0.zone?.id == app.zoneID && $0.zone?.minor == app.mordor.minor })
            #expect(listed.filter { $0.application != nil }.allSatisfy { $0.gatewayID == device.id && $0.siteID == app.office.site.id })
        }
    }

    @Test func queueWaitsAndAbandonmentFromDevicesBatches() async throws {
        try await AppsHarness.with { app in
            let restroom = try await Self.restroom(app)
            let created = try await app.call(.post, "/v1/queues", as: .operator,
                                             json: #"{"name":"Help desk","entryZoneID":\#(app.zoneID),"serviceZoneID":\#(restroom.zoneID),"abandonAfter":120}"#)
            #expect(created.status == .created, "\(created.text)")
            let queue = try created.json(Queue.self)
            let (_, ann) = try await app.register(name: "Ann")
            let (_, bob) = try await app.register(name: "Bob")
            let t0 = AppsHarness.monday
            try await app.post(heard: app.mordor, at: t0, token: ann, sequence: 1)
            try await app.post(heard: app.mordor, at: t0 + 10, token: bob, sequence: 1)
            try await app.post(heard: app.mordor, at: t0 + 60, token: ann, sequence: 2)
            var report = try await app.call(.get, "/v1/queues/\(queue.id)", as: .readOnly).json(QueueReport.self)
            #expect(report.live.waiting == 2)
            #expect(report.live.longestWait.map { abs($0 - 60.8) < 1e-6 } == true)

            // Ann reaches the service zone; the batch is sent twice.
            try await app.post(heard: restroom.identity, at: t0 + 100, token: ann, sequence: 3)
            try await app.post(heard: restroom.identity, at: t0 + 100, token: ann, sequence: 3)
            // Bob is not heard again; Ann's later batch moves the queue's clock past his 120 s.
            try await app.post(heard: restroom.identity, at: t0 + 200, token: ann, sequence: 4)
            report = try await app.call(.get, "/v1/queues/\(queue.id)", as: .readOnly).json(QueueReport.self)
            #expect(report.live.waiting == 0)
            #expect(report.last15Minutes.served == 1 && report.last15Minutes.abandoned == 1)
            // Entered at the first packet (0.8 s before t0), served at the restroom's first packet.
            let wait = (t0 + 100 - 0.8) - (t0 - 0.8)
            #expect(report.last15Minutes.p50.map { abs($0 - wait) < 1e-6 } == true)
            #expect(report.total.served == 1 && report.total.abandoned == 1)
            #expect(report.total.p50.map { abs($0 - wait) / wait < 0.005 } == true)
            #expect(report.hours.count == 1)

            let metrics = try await app.call(.get, "/metrics").text
            #expect(metrics.contains("proxima_queue_waiting{queue=\"\(queue.id)\"} 0"))
            #expect(metrics.contains("proxima_queue_abandoned_15m{queue=\"\(queue.id)\"} 1"))
            #expect(metrics.contains("proxima_queue_wait_seconds{queue=\"\(queue.id)\",quantile=\"0.5\"} 100"))
        }
    }

    @Test func theQueueClockClosesAPassageWithoutAnotherBatchOfThatDevice() async throws {
        try await AppsHarness.with { app in
            let restroom = try await Self.restroom(app)
            let queue = try await app.server.store.createQueue(NewQueue(name: "Q", entryZoneID: app.zoneID, serviceZoneID: restroom.zoneID,
                                                                         abandonAfter: 60), now: AppsHarness.monday)
            let (_, token) = try await app.register()
            try await app.post(heard: app.mordor, at: AppsHarness.monday, token: token, sequence: 1)
            // Nobody posts again; the server's clock moves on past abandonAfter.
            app.clock.set(AppsHarness.monday + 59)
            #expect(try await app.server.store.queueReport(id: queue.id, hours: 1, now: app.clock.now).live.waiting == 1)
            app.clock.set(AppsHarness.monday + 61)
            let report = try await app.server.store.queueReport(id: queue.id, hours: 1, now: app.clock.now)
            #expect(report.live.waiting == 0 && report.total.abandoned == 1)
            // Read again: still one.
            #expect(try await app.server.store.queueReport(id: queue.id, hours: 1, now: app.clock.now).total.abandoned == 1)
        }
    }

    @Test func everyRouteHoldsItsRolesAndNamesRefusedFields() async throws {
        try await AppsHarness.with { app in
            let restroom = try await Self.restroom(app)
            let queueBody = #"{"name":"Q","entryZoneID":\#(app.zoneID),"serviceZoneID":\#(restroom.zoneID)}"#
            let (device, deviceToken) = try await app.register()
            let (otherDevice, _) = try await app.register(name: "Other")

            #expect(try await app.call(.post, "/v1/queues", json: queueBody).status == .unauthorized)
            for role in [Role.readOnly, .gateway, .enrolment] {
                #expect(try await app.call(.post, "/v1/queues", as: role, json: queueBody).status == .forbidden, "\(role)")
            }
            #expect(try await app.call(.post, "/v1/queues", token: deviceToken, json: queueBody).status == .forbidden)
            let queue = try await app.call(.post, "/v1/queues", as: .admin, json: queueBody).json(Queue.self)
            #expect(queue.abandonAfter == QueueLimits.defaultAbandonAfter && queue.siteID == app.office.site.id)

            for path in ["/v1/queues", "/v1/queues/\(queue.id)", "/v1/checkin-zones"] {
                #expect(try await app.call(.get, path).status == .unauthorized, "\(path)")
                #expect(try await app.call(.get, path, as: .gateway).status == .forbidden, "\(path)")
                #expect(try await app.call(.get, path, as: .readOnly).status == .ok, "\(path)")
            }
            // A device reads its own site's queues only, and no list.
            #expect(try await app.call(.get, "/v1/queues/\(queue.id)", token: deviceToken).status == .ok)
            #expect(try await app.call(.get, "/v1/queues", token: deviceToken).status == .forbidden)
            let organisation = app.office.organisation.id
            let elsewhere = try await app.server.store.createSite(NewSite(organisationID: organisation, name: "Elsewhere", address: "", planWidth: 10, planHeight: 10))
            let (_, strangerToken) = try await app.register(name: "Stranger", siteID: elsewhere.id)
            let stranger = try await app.call(.get, "/v1/queues/\(queue.id)", token: strangerToken)
            #expect(stranger.status == .forbidden && stranger.text.contains("\"field\":\"id\""))

            // Check-in zones.
            let rule = #"{"dwell":30,"absence":300}"#
            #expect(try await app.call(.put, "/v1/checkin-zones/\(app.zoneID)", json: rule).status == .unauthorized)
            #expect(try await app.call(.put, "/v1/checkin-zones/\(app.zoneID)", as: .readOnly, json: rule).status == .forbidden)
            #expect(try await app.call(.put, "/v1/checkin-zones/\(app.zoneID)", token: deviceToken, json: rule).status == .forbidden)
            #expect(try await app.call(.put, "/v1/checkin-zones/\(app.zoneID)", as: .operator, json: rule).status == .ok)
            #expect(try await app.call(.get, "/v1/checkin-zones/\(app.zoneID)", as: .readOnly).json(CheckinZone.self).dwell == 30)
            #expect(try await app.call(.get, "/v1/checkin-zones?site=\(app.office.site.id)", as: .readOnly).json([CheckinZone].self).count == 1)

            // A device's check-ins: itself and readers, not another device.
            #expect(try await app.call(.get, "/v1/devices/\(device.id)/checkins").status == .unauthorized)
            #expect(try await app.call(.get, "/v1/devices/\(device.id)/checkins", as: .gateway).status == .forbidden)
            #expect(try await app.call(.get, "/v1/devices/\(device.id)/checkins", as: .readOnly).status == .ok)
            #expect(try await app.call(.get, "/v1/devices/\(device.id)/checkins", token: deviceToken).status == .ok)
            let other = try await app.call(.get, "/v1/devices/\(otherDevice.id)/checkins", token: deviceToken)
            #expect(other.status == .forbidden && other.text.contains("\"field\":\"id\""))

            // Refusals name their field.
            let refusals: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
                (.post, "/v1/queues", #"{"name":"Q","entryZoneID":\#(app.zoneID),"serviceZoneID":\#(restroom.zoneID),"abandonAfter":5}"#, .unprocessableContent, "abandonAfter"),
                (.post, "/v1/queues", #"{"name":"Q","entryZoneID":\#(app.zoneID),"serviceZoneID":\#(app.zoneID)}"#, .unprocessableContent, "serviceZoneID"),
                (.post, "/v1/queues", #"{"name":"Q","entryZoneID":999999,"serviceZoneID":\#(app.zoneID)}"#, .notFound, "entryZoneID"),
                (.post, "/v1/queues", #"{"name":"","entryZoneID":\#(app.zoneID),"serviceZoneID":\#(restroom.zoneID)}"#, .unprocessableContent, "name"),
                (.put, "/v1/checkin-zones/\(app.zoneID)", #"{"dwell":0,"absence":300}"#, .unprocessableContent, "dwell"),
                (.put, "/v1/checkin-zones/\(app.zoneID)", #"{"dwell":30,"absence":-1}"#, .unprocessableContent, "absence"),
                (.put, "/v1/checkin-zones/999999", rule, .notFound, "zoneID"),
                (.get, "/v1/queues/\(queue.id)?hours=0", nil, .badRequest, "hours"),
                (.get, "/v1/queues/999999", nil, .notFound, "id"),
                (.get, "/v1/devices/\(device.id)/checkins?limit=0", nil, .badRequest, "limit"),
            ]
            for (method, path, body, status, field) in refusals {
                let response = try await app.call(method, path, as: .admin, json: body)
                #expect(response.status == status, "\(path) \(body ?? ""): \(response.text)")
                #expect(response.text.contains("\"field\":\"\(field)\""), "\(path) \(body ?? ""): \(response.text)")
            }

            #expect(try await app.call(.delete, "/v1/queues/\(queue.id)", as: .readOnly).status == .forbidden)
            #expect(try await app.call(.delete, "/v1/queues/\(queue.id)", as: .operator).status == .noContent)
            #expect(try await app.call(.delete, "/v1/checkin-zones/\(app.zoneID)", as: .readOnly).status == .forbidden)
            #expect(try await app.call(.delete, "/v1/checkin-zones/\(app.zoneID)", as: .operator).status == .noContent)
            #expect(try await app.call(.get, "/v1/checkin-zones/\(app.zoneID)", as: .readOnly).status == .notFound)
        }
    }
}
