import Foundation
import Testing
@testable import BeaconWallet

@Suite("Pass validation")
struct PassValidationTests {
    static func pass(beacons: Int = 1, extra: [String: Any] = [:]) -> [String: Any] {
        var pass: [String: Any] = [
            "formatVersion": 1,
            "passTypeIdentifier": "pass.com.example.store",
            "serialNumber": "S-1",
            "teamIdentifier": "ABCDE12345",
            "organizationName": "Example",
            "description": "Store card",
            "storeCard": ["primaryFields": []],
            "beacons": (0..<beacons).map { index in
                ["proximityUUID": "F7826DA6-4FA2-4E98-8024-BC5B71E0893E", "major": 1, "minor": index] as [String: Any]
            },
        ]
        for (key, value) in extra { pass[key] = value }
        return pass
    }

    @Test func aCompletePassIsAccepted() throws {
        try PassValidation.validate(pass: Self.pass())
    }

    @Test func anEleventhBeaconIsNamed() {
        #expect(throws: PassError.self) { try PassValidation.validate(pass: Self.pass(beacons: 11)) }
        do {
            try PassValidation.validate(pass: Self.pass(beacons: 11))
        } catch {
            #expect(error.field == "beacons[10]")
        }
    }

    @Test func aMissingKeyIsNamed() {
        var pass = Self.pass()
        pass["serialNumber"] = nil
        do {
            try PassValidation.validate(pass: pass)
            Issue.record("accepted a pass without a serial number")
        } catch {
            #expect(error.field == "serialNumber")
        }
    }

    @Test func aBadBeaconUUIDAndMajorAreNamed() {
        let badUUID = Self.pass(extra: ["beacons": [["proximityUUID": "not-a-uuid"]]])
        do { try PassValidation.validate(pass: badUUID); Issue.record("accepted a bad UUID") } catch {
            #expect(error.field == "beacons[0].proximityUUID")
        }
        let badMajor = Self.pass(extra: ["beacons": [["proximityUUID": "F7826DA6-4FA2-4E98-8024-BC5B71E0893E", "major": 70000]]])
        do { try PassValidation.validate(pass: badMajor); Issue.record("accepted major 70000") } catch {
            #expect(error.field == "beacons[0].major")
        }
    }

    @Test func aWebServiceNeedsHTTPSAndALongToken() {
        let plain = Self.pass(extra: ["webServiceURL": "http://example.com/passes", "authenticationToken": String(repeating: "a", count: 16)])
        do { try PassValidation.validate(pass: plain); Issue.record("accepted http") } catch {
            #expect(error.field == "webServiceURL")
        }
        let short = Self.pass(extra: ["webServiceURL": "https://example.com/passes", "authenticationToken": "short"])
        do { try PassValidation.validate(pass: short); Issue.record("accepted a short token") } catch {
            #expect(error.field == "authenticationToken")
        }
    }

    @Test func manifestHashesAreSHA1OfEachFile() throws {
        let files = ["pass.json": Data("{}".utf8), "icon.png": Data([0x89, 0x50])]
        let manifest = PassManifest.make(files: files)
        let object = try #require(try JSONSerialization.jsonObject(with: manifest) as? [String: String])
        #expect(object["pass.json"] == "bf21a9e8fbc5a3846fb05b4fa0859e0917b2202f")
        try PassManifest.check(manifest: manifest, files: files)
        var changed = files
        changed["icon.png"] = Data([0x89, 0x51])
        do { try PassManifest.check(manifest: manifest, files: changed); Issue.record("accepted a changed file") } catch {
            #expect(error.field.contains("icon.png"))
        }
    }
}
