import Foundation
import Hummingbird
import NIOCore
import SQLKit

/// `GET /v1/devices/{id}/export`: everything stored about a device, for the person it belongs
/// to. JSON Lines (`application/x-ndjson`), one record per line with its `kind`, written page by
/// page so a phone with years of events costs the server one page of memory at a time.
extension ProximaServer {
    func addDeviceExportRoute(to router: Router<ProximaRequestContext>) {
        router.get("/v1/devices/:id/export") { [store] _, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id, operatorsNeed: .read)
            let device = try await store.device(id: id)
            let body = ResponseBody { writer in
                func write(_ kind: String, _ value: some Encodable) async throws {
                    let record = try Self.encoder.encode(value)
                    var line = #"{"kind":"\#(kind)","data":"#
                    line += String(decoding: record, as: UTF8.self)
                    line += "}\n"
                    try await writer.write(ByteBuffer(string: line))
                }
                try await write("device", device)
                var after = 0
                while true {
                    let page = try await store.eventPage(after: after, filter: EventFilter(gatewayID: id), limit: EventPage.maximumLimit)
                    for event in page.events { try await write("event", event) }
                    guard let next = page.nextAfter, next > after else { break }
                    after = next
                }
                for request in try await store.helpRequests(deviceID: id) { try await write("helpRequest", request) }
                try await write("checkins", try await store.checkins(deviceID: id, limit: QueueLimits.checkinPage.upperBound))
                for run in try await store.huntRuns(deviceID: id) { try await write("huntRun", run) }
                try await write("offers", try await store.deviceOffers(deviceID: id))
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson",
                                                   .contentDisposition: "attachment; filename=\"device-\(id.prefix(64)).jsonl\""],
                            body: body)
        }
    }
}

extension Store {
    /// The help requests a device filed, newest first (bounded: a site keeps at most its live
    /// limit open, and a device files one at a time).
    public func helpRequests(deviceID: String, limit: Int = 1_000) async throws -> [HelpRequest] {
        try await database.read { db in
            try await db.raw("""
                SELECT \(unsafeRaw: Self.helpColumns) FROM help_requests WHERE device_id = \(bind: deviceID) ORDER BY id DESC LIMIT \(bind: limit)
                """).all().map(Self.decodeHelpRequest)
        }
    }
}
