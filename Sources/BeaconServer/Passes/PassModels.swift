import BeaconKit
import Foundation

/// One beacon a pass carries: Wallet shows `relevantText` on the lock screen near it.
public struct CarriedBeacon: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var relevantText: String

    public var identity: BeaconIdentity { BeaconIdentity(uuid: uuid, major: major, minor: minor) }
}

/// A pass the server issued. The authentication token is not part of what the API lists: it is
/// only in the signed pass, which only staff who may issue passes can download.
public struct IssuedPass: Sendable, Hashable, Codable {
    public var serial: String
    public var siteID: Int
    public var passTypeIdentifier: String
    public var visitor: String
    /// 1 when issued, one more each time its beacons change.
    public var version: Int
    /// The update tag of its latest version (the web service's `lastUpdated`).
    public var updateTag: Int
    public var createdAt: Double
    public var updatedAt: Double
    public var beacons: [CarriedBeacon]

    enum CodingKeys: String, CodingKey {
        case serial, siteID, passTypeIdentifier, visitor, version, updateTag, createdAt, updatedAt, beacons
    }
}

/// What the server keeps of an issued pass besides its public description.
struct StoredPass: Sendable {
    var pass: IssuedPass
    /// Kept as issued, not hashed: every new version of the pass must carry the same token
    /// (Wallet never lets it change), so the server must be able to write it again.
    var authenticationToken: String
}

/// `POST /v1/sites/{id}/passes`: who the pass is for and, optionally, the zones whose beacons
/// it carries (the site's entrance zones when absent).
public struct NewPass: Sendable, Hashable, Codable {
    public var visitor: String
    public var zones: [Int]?

    public init(visitor: String, zones: [Int]? = nil) {
        self.visitor = visitor
        self.zones = zones
    }
}

/// The answer to issuing a pass: its description and where to download it.
public struct PassIssued: Sendable, Hashable, Codable {
    public var pass: IssuedPass
    public var download: String
}

/// A site's pass template: pass.json without the per-pass keys, and its images.
public struct PassTemplate: Sendable, Hashable {
    public var siteID: Int
    /// pass.json's top-level object as JSON text (sorted keys).
    public var passJSON: Data
    public var images: [String: Data]
    public var updatedAt: Double

    /// The pass type identifier the template names (checked present when it was stored).
    var passTypeIdentifier: String {
        ((try? JSONSerialization.jsonObject(with: passJSON)) as? [String: Any])?["passTypeIdentifier"] as? String ?? ""
    }
}

/// Bounds on templates and passes, so one site cannot fill the database.
public struct PassLimits: Sendable, Hashable {
    public var imagesPerTemplate = 24
    public var bytesPerImage = 512 * 1024
    public var templateBytes = 4 * 1024 * 1024
    public var passJSONBytes = 64 * 1024
    public var visitorLength = 100
    public var passesPerSite = 100_000
    public var registrationsPerPass = 20
    public var logEntries = 50
    public var logEntryLength = 1_000

    public init() {}
}

/// A device's registration for a pass's updates (Apple's pass web service).
public struct PassRegistration: Sendable, Hashable {
    public var deviceLibraryIdentifier: String
    public var passTypeIdentifier: String
    public var serial: String
    public var pushToken: String
}

/// A push to send: Wallet on the device with this token then asks which passes changed.
public struct QueuedPush: Sendable, Hashable {
    public var id: Int
    public var pushToken: String
    public var passTypeIdentifier: String
    public var attempts: Int
}

/// The outcome of renumbering a zone: the zone as it is now and the passes re-issued for it.
public struct ZoneRenumbered: Sendable, Hashable, Codable {
    public var zone: Zone
    public var reissuedPasses: [String]
}
