import BeaconKit
@testable import BeaconServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 13, items 1 and 2 on the server: devices that post their own sightings under their
/// consent, and messages of the day delivered in their enter events on a schedule evaluated on
/// the server's clock.
@Suite("Devices and messages of the day")
struct DeviceAppTests {
    /// An evening message in New York: Mondays 18:00–23:00 there, which is Tuesday in UTC.
    static let eveningMessage = #"{"zoneID":ZONE,"body":"Quiz night in Mordor","schedule":{"days":["mon"],"timeOfDay":{"start":"18:00","end":"23:00"},"timeZone":"America/New_York"}}"#

    @Test func enterEventsCarryTheMessageOnlyInsideItsSchedule() async throws {
        try await AppsHarness.with { app in
            let messageID = try await app.createMessage(Self.eveningMessage.replacingOccurrences(of: "ZONE", with: "\(app.zoneID)"))
            let (device, token) = try await app.register()
            let other = BeaconIdentity(uuid: app.mordor.uuid, major: 1, minor: 4242)

            // Monday 17:00 in New York: before the window, so the enter has no message.
            let before = try AppsHarness.time("2026-11-23 17:00", in: "America/New_York")
            #expect(try await app.post(heard: app.mordor, at: before, token: token, sequence: 1).status == .accepted)
            #expect(try await app.call(.get, app.lookupPath, token: token).text.contains("\"message\"") == false)
            // Another beacon heard for two hours moves the device's engine on, and Mordor exits.
            for (index, minutes) in [60.0, 119].enumerated() {
                try await app.post(heard: other, at: before + minutes * 60, token: token, sequence: 2 + index)
            }
            // Monday 20:00 in New York is Tuesday 01:00 UTC: inside the window in the venue's zone.
            let inside = try AppsHarness.time("2026-11-23 20:00", in: "America/New_York")
            #expect(try await app.post(heard: app.mordor, at: inside, token: token, sequence: 10).status == .accepted)

            let events = try await app.eventObjects(deviceID: device.id, token: token)
            let mordorEnters = events.filter { ($0["event"] as? String) == "enter" && (($0["region"] as? [String: Any])?["minor"] as? Int) == 1001 }
            #expect(mordorEnters.count == 2)
            #expect(mordorEnters.first?.keys.contains("message") == false, "no message field outside the schedule")
            let delivered = try #require(mordorEnters.last?["message"] as? [String: Any])
            #expect(delivered["id"] as? Int == messageID)
            #expect(delivered["body"] as? String == "Quiz night in Mordor")
            #expect(delivered["format"] as? String == "text")
            #expect(events.contains { ($0["event"] as? String) == "exit" })
            #expect(events.filter { ($0["event"] as? String) == "exit" }.allSatisfy { !$0.keys.contains("message") })

            // The lookup follows the clock: inside now, outside on Tuesday evening in New York.
            app.clock.set(inside)
            let lookup = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await app.call(.get, app.lookupPath, token: token).body)) as? [String: Any])
            #expect((lookup["message"] as? [String: Any])?["id"] as? Int == messageID)
            #expect(lookup["label"] as? String == "Bloomington Office – Conference Room: Mordor")
            app.clock.set(try AppsHarness.time("2026-11-24 20:00", in: "America/New_York"))
            #expect(try await app.call(.get, app.lookupPath, token: token).text.contains("\"message\"") == false)
        }
    }

    @Test func theGatewaysEnterEventsCarryNoMessage() async throws {
        try await AppsHarness.with { app in
            _ = try await app.createMessage(#"{"zoneID":\#(app.zoneID),"body":"Always"}"#)
            let events = try await app.post(heard: app.mordor, at: AppsHarness.monday, token: app.tokens[.gateway]!)
            #expect(events.status == .accepted)
            let stored = try await app.server.store.events(after: 0).filter { $0.event != nil }
            #expect(stored.map(\.kindName) == ["enter"])
            #expect(stored.first?.message == nil)
        }
    }

    @Test func aBeaconsOwnMessageWinsOverItsZonesAndTheLatestAmongEquals() async throws {
        try await AppsHarness.with { app in
            _ = try await app.createMessage(#"{"zoneID":\#(app.zoneID),"body":"Zone"}"#)
            let beaconMessage = try await app.createMessage(#"{"beaconID":\#(app.office.mordor.id),"body":"Beacon"}"#)
            app.clock.set(AppsHarness.monday + 10)
            let newer = try await app.createMessage(#"{"beaconID":\#(app.office.mordor.id),"body":"Newer"}"#)
            let (_, token) = try await app.register()
            let lookup = try await app.call(.get, app.lookupPath, token: token).json(MessageLookup.self)
            #expect(lookup.message?.id == newer)
            #expect(try await app.call(.delete, "/v1/messages/\(newer)", as: .operator).status == .noContent)
            #expect(try await app.call(.get, app.lookupPath, token: token).json(MessageLookup.self).message?.id == beaconMessage)
        }
    }

    @Test func htmlIsSanitisedOnTheWayIn() async throws {
        try await AppsHarness.with { app in
            let body = #"{"zoneID":\#(app.zoneID),"format":"html","body":"<p onclick=\"steal()\">Hi <a href=\"javascript:alert(1)\">there</a><script>alert(2)</script></p>"}"#
            let response = try await app.call(.post, "/v1/messages", as: .operator, json: body)
            #expect(response.status == .created)
            let saved = try response.json(SavedDayMessage.self)
            #expect(saved.message.body == "<p>Hi <a>there</a></p>")
            #expect(saved.removed == ["attribute onclick", "URL scheme javascript:", "element script"])
            #expect(try await app.server.store.message(id: saved.message.id).body == "<p>Hi <a>there</a></p>")
        }
    }

    @Test func consentDecidesWhatIsKept() async throws {
        try await AppsHarness.with { app in
            let (eventsOnly, eventsToken) = try await app.register(name: "events only", positions: false)
            let (sharing, sharingToken) = try await app.register(name: "shares positions", positions: true)
            for token in [eventsToken, sharingToken] {
                #expect(try await app.post(heard: app.mordor, at: AppsHarness.monday, token: token, packets: 20).status == .accepted)
            }
            let ranging = { (id: String) in try await app.server.store.rangingState(gatewayID: id) }
            #expect(try await ranging(eventsOnly.id).isEmpty, "no ranging state without positions consent")
            #expect(try await ranging(sharing.id).count == 1)
            // Both get their enter event.
            let kinds = { (id: String, token: String) in try await app.eventObjects(deviceID: id, token: token).compactMap { $0["event"] as? String } }
            #expect(try await kinds(eventsOnly.id, eventsToken) == ["enter"])
            #expect(try await kinds(sharing.id, sharingToken) == ["enter"])

            // No events consent: the server keeps nothing, and says why.
            let refusing = try await app.call(.post, "/v1/devices", as: .enrolment,
                                              json: #"{"siteID":\#(app.office.site.id),"name":"lookups only","consent":{"events":false,"positions":false}}"#)
            let silent = try refusing.json(RegisteredDevice.self)
            let refused = try await app.post(heard: app.mordor, at: AppsHarness.monday + 4, token: silent.token)
            #expect(refused.status == .forbidden)
            #expect(refused.errorField == "consent.events")
            #expect(try await app.server.store.events(after: 0).filter { $0.gatewayID == silent.device.id }.isEmpty)

            let contradictory = try await app.call(.post, "/v1/devices", as: .enrolment,
                                                   json: #"{"siteID":\#(app.office.site.id),"name":"x","consent":{"events":false,"positions":true}}"#)
            #expect(contradictory.status == .unprocessableContent)
            #expect(contradictory.errorField == "consent.positions")
            let missing = try await app.call(.post, "/v1/devices", as: .enrolment, json: #"{"siteID":\#(app.office.site.id),"name":"x"}"#)
            #expect(missing.status == .badRequest)
            #expect(missing.errorField == "consent")
        }
    }

    @Test func anAnonymousDeviceHasARandomIdentifierAndNoName() async throws {
        try await AppsHarness.with { app in
            let (first, token) = try await app.register(name: nil, anonymous: true)
            let (second, _) = try await app.register(name: nil, anonymous: true)
            #expect(first.anonymous && first.name == nil)
            #expect(first.id != second.id)
            #expect(UUID(uuidString: first.id) != nil)
            let shown = try await app.call(.get, "/v1/devices/\(first.id)", token: token)
            #expect(shown.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])
            #expect(!object.keys.contains("name"))
            #expect(object["anonymous"] as? Bool == true)
            // Its sightings work like anyone's.
            #expect(try await app.post(heard: app.mordor, at: AppsHarness.monday, token: token).status == .accepted)
            #expect(try await app.eventObjects(deviceID: first.id, token: token).count == 1)

            let named = try await app.call(.post, "/v1/devices", as: .enrolment,
                                           json: #"{"siteID":\#(app.office.site.id),"anonymous":true,"name":"Ann","consent":{"events":true,"positions":false}}"#)
            #expect(named.status == .unprocessableContent)
            #expect(named.errorField == "name")
            let nameless = try await app.call(.post, "/v1/devices", as: .enrolment,
                                              json: #"{"siteID":\#(app.office.site.id),"consent":{"events":true,"positions":false}}"#)
            #expect(nameless.status == .unprocessableContent)
            #expect(nameless.errorField == "name")
        }
    }

    @Test func deletingADeviceForgetsItsTokenAndEvents() async throws {
        try await AppsHarness.with { app in
            let (device, token) = try await app.register()
            #expect(try await app.post(heard: app.mordor, at: AppsHarness.monday, token: token).status == .accepted)
            #expect(try await app.server.store.events(after: 0).count == 1)
            #expect(try await app.call(.delete, "/v1/devices/\(device.id)", token: token).status == .noContent)
            #expect(try await app.server.store.events(after: 0).isEmpty)
            #expect(try await app.call(.get, "/v1/devices/\(device.id)", token: token).status == .unauthorized)
            #expect(try await app.post(heard: app.mordor, at: AppsHarness.monday + 1, token: token).status == .unauthorized)
            let gone = try await app.call(.get, "/v1/devices/\(device.id)", as: .operator)
            #expect(gone.status == .notFound)
            #expect(gone.errorField == "id")
            #expect(try await app.call(.get, "/v1/devices", as: .operator).json([Device].self).isEmpty)
            // A token another instance still remembers is refused at ingestion, not failed on.
            let late = SightingBatch(sequence: 9, sightings: [])
            await #expect(throws: APIError.self) { _ = try await app.server.accept(late, gatewayID: device.id) }
        }
    }

    @Test func sizesAreBounded() async throws {
        var configuration = ServerConfiguration()
        configuration.apps.devicesPerSite = 2
        configuration.apps.messagesPerTarget = 2
        configuration.apps.textMessageLength = 10
        configuration.apps.htmlMessageBytes = 40
        try await AppsHarness.with(configuration: configuration) { app in
            _ = try await app.register()
            _ = try await app.register()
            let third = try await app.call(.post, "/v1/devices", as: .enrolment,
                                           json: #"{"siteID":\#(app.office.site.id),"name":"third","consent":{"events":true,"positions":false}}"#)
            #expect(third.status == .conflict)
            #expect(third.errorField == "siteID")
            #expect(third.text.contains("limit of 2 devices"))

            _ = try await app.createMessage(#"{"zoneID":\#(app.zoneID),"body":"one"}"#)
            let second = try await app.createMessage(#"{"zoneID":\#(app.zoneID),"body":"two"}"#)
            let full = try await app.call(.post, "/v1/messages", as: .operator, json: #"{"zoneID":\#(app.zoneID),"body":"three"}"#)
            #expect(full.status == .conflict)
            #expect(full.errorField == "zoneID")
            // Replacing one of the two is not a third.
            #expect(try await app.call(.put, "/v1/messages/\(second)", as: .operator, json: #"{"zoneID":\#(app.zoneID),"body":"2"}"#).status == .ok)

            let long = try await app.call(.post, "/v1/messages", as: .operator, json: #"{"beaconID":\#(app.office.mordor.id),"body":"eleven char"}"#)
            #expect(long.status == .unprocessableContent)
            #expect(long.errorField == "body")
            let big = try await app.call(.post, "/v1/messages", as: .operator,
                                         json: #"{"beaconID":\#(app.office.mordor.id),"format":"html","body":"<p>\#(String(repeating: "x", count: 40))</p>"}"#)
            #expect(big.status == .unprocessableContent)
            #expect(big.text.contains("at most 40 bytes"))
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var json: String
        var status: HTTPResponse.Status
        var field: String
        var testDescription: String { field }
    }

    static let refusals: [Refusal] = [
        Refusal(json: #"{"body":"x"}"#, status: .unprocessableContent, field: "zoneID"),
        Refusal(json: #"{"zoneID":ZONE,"beaconID":1,"body":"x"}"#, status: .unprocessableContent, field: "beaconID"),
        Refusal(json: #"{"zoneID":999,"body":"x"}"#, status: .notFound, field: "zoneID"),
        Refusal(json: #"{"zoneID":ZONE,"body":"  "}"#, status: .unprocessableContent, field: "body"),
        Refusal(json: #"{"zoneID":ZONE,"format":"markdown","body":"x"}"#, status: .badRequest, field: "format"),
        Refusal(json: #"{"zoneID":ZONE,"format":"html","body":"<script>x</script>"}"#, status: .unprocessableContent, field: "body"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"days":["mon","funday"]}}"#, status: .badRequest, field: "schedule.days[1]"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"days":["mon","mon"]}}"#, status: .unprocessableContent, field: "schedule.days[1]"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"timeZone":"Mars/Olympus"}}"#, status: .unprocessableContent, field: "schedule.timeZone"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"from":"2026-02-30"}}"#, status: .unprocessableContent, field: "schedule.from"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"from":"2026-12-01","to":"2026-11-01"}}"#, status: .unprocessableContent, field: "schedule.to"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"timeOfDay":{"start":"25:00","end":"10:00"}}}"#, status: .unprocessableContent, field: "schedule.timeOfDay.start"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"timeOfDay":{"start":"10:00","end":"10:00"}}}"#, status: .unprocessableContent, field: "schedule.timeOfDay.end"),
        Refusal(json: #"{"zoneID":ZONE,"body":"x","schedule":{"timeOfDay":{"start":"10:00"}}}"#, status: .badRequest, field: "schedule.timeOfDay.end"),
    ]

    @Test(arguments: refusals)
    func refusedMessagesNameTheirField(refusal: Refusal) async throws {
        try await AppsHarness.with { app in
            let response = try await app.call(.post, "/v1/messages", as: .operator, json: refusal.json.replacingOccurrences(of: "ZONE", with: "\(app.zoneID)"))
            #expect(response.status == refusal.status, "\(response.text)")
            #expect(response.errorField == refusal.field, "\(response.text)")
        }
    }

    @Test func refusedLookupsNameTheirField() async throws {
        try await AppsHarness.with { app in
            let uuid = app.mordor.uuid.uuidString
            for (query, field) in [("uuid=nope&major=1&minor=1", "uuid"), ("uuid=\(uuid)&major=70000&minor=1", "major"),
                                   ("uuid=\(uuid)&major=1", "minor")] {
                let response = try await app.call(.get, "/v1/messages?\(query)", as: .readOnly)
                #expect(response.status == .badRequest)
                #expect(response.errorField == field)
            }
            for (path, field) in [("/v1/devices/not-a-uuid", "id"), ("/v1/devices?site=x", "site"), ("/v1/messages?site=x", "site"),
                                  ("/v1/messages/x", "id")] {
                let response = try await app.call(.get, path, as: .admin)
                #expect(response.status == .badRequest, "\(path)")
                #expect(response.errorField == field, "\(path)")
            }
        }
    }
}
