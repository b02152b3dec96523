import Foundation

/// What a person agreed to when their phone registered. Both flags are given explicitly; there
/// is no default consent.
public struct DeviceConsent: Sendable, Hashable, Codable {
    /// The server may run the engine on the device's sightings and keep its enter and exit
    /// events (and attach messages of the day to them).
    public var events: Bool
    /// The server may also keep where the device is: ranging state (distances to beacons),
    /// positions and room events from the site's map.
    public var positions: Bool

    public init(events: Bool, positions: Bool) {
        self.events = events
        self.positions = positions
    }
}

/// A phone or any other receiver registered to a site, which posts its own sightings with a
/// device token as a gateway does. Its `id` is also the id of the gateway record behind it, so
/// ingestion, checkpoints and event streams treat it as a gateway.
public struct Device: Sendable, Hashable, Codable {
    public var id: String
    public var siteID: Int
    /// nil for an anonymous device: then the random `id` is all the server knows (and the
    /// synthesised encoding leaves `name` out rather than sending null).
    public var name: String?
    public var anonymous: Bool
    public var consent: DeviceConsent
    public var createdAt: Double

    public init(id: String, siteID: Int, name: String?, anonymous: Bool, consent: DeviceConsent, createdAt: Double) {
        self.id = id
        self.siteID = siteID
        self.name = name
        self.anonymous = anonymous
        self.consent = consent
        self.createdAt = createdAt
    }

    /// The name of the gateway record behind the device, which room events of a site's map
    /// use as the phone's name (no personal name goes there).
    static func gatewayName(id: String) -> String { "device-\(id)" }
}

/// `POST /v1/devices`: a name, or `"anonymous": true` and no name; consent is required.
public struct NewDevice: Sendable, Hashable, Codable {
    public var siteID: Int
    public var name: String?
    public var anonymous: Bool?
    public var consent: DeviceConsent

    public init(siteID: Int, name: String? = nil, anonymous: Bool? = nil, consent: DeviceConsent) {
        self.siteID = siteID
        self.name = name
        self.anonymous = anonymous
        self.consent = consent
    }
}

/// A registered device and its token, shown once.
public struct RegisteredDevice: Sendable, Hashable, Codable {
    public var device: Device
    public var token: String
}

/// Bounds of the applications' data, so one client cannot fill the database.
public struct AppLimits: Sendable, Hashable {
    /// Devices one site may register.
    public var devicesPerSite = 10_000
    /// Characters of a device's name.
    public var deviceNameLength = 100
    /// Characters of a plain-text message.
    public var textMessageLength = 1_000
    /// Bytes of an HTML message as sent (before sanitising).
    public var htmlMessageBytes = 16 * 1024
    /// Messages attached to one zone, and to one beacon.
    public var messagesPerTarget = 20

    public init() {}
}
