import Foundation

/// Words an operator attaches to a zone, offered to devices near it. Offers are made as a
/// choice among the near zones with offers, ranked, never as "the" nearest one: a phone's
/// distance estimate is too rough to tell which of two near beacons it stands at.
public struct Offer: Sendable, Hashable, Codable {
    public var id: Int
    public var siteID: Int
    public var zoneID: Int
    public var title: String
    public var body: String
    public var createdAt: Double
    public var updatedAt: Double
}

/// `POST /v1/offers`, `PUT /v1/offers/{id}`.
public struct NewOffer: Sendable, Hashable, Codable {
    public var zoneID: Int
    public var title: String
    public var body: String

    public init(zoneID: Int, title: String, body: String) {
        self.zoneID = zoneID
        self.title = title
        self.body = body
    }
}

/// How a site offers: what counts as near, how many choices, and how often a device may be
/// offered anything.
public struct OfferSettings: Sendable, Hashable, Codable {
    /// Offers made to one device within `window` seconds; more are refused and counted.
    public var perWindow: Int
    /// Seconds of the rate limit's window, on the device's clock.
    public var window: Double
    /// A beacon is near when the engine's accuracy (metres) is at most this.
    public var reach: Double
    /// At most this many choices in one offer.
    public var maxChoices: Int
    /// Readings older than this many seconds (before the batch's last sighting) are not near.
    public var freshness: Double

    public static let standard = OfferSettings(perWindow: 3, window: 600, reach: 5, maxChoices: 3, freshness: 10)

    public init(perWindow: Int, window: Double, reach: Double, maxChoices: Int, freshness: Double) {
        self.perWindow = perWindow
        self.window = window
        self.reach = reach
        self.maxChoices = maxChoices
        self.freshness = freshness
    }
}

/// `GET|PUT /v1/offer-settings/{site}`: a site's settings and its counts.
public struct SiteOfferSettings: Sendable, Hashable, Codable {
    public var siteID: Int
    public var settings: OfferSettings
    /// Offers made to the site's devices, and offers the rate limit refused.
    public var delivered: Int
    public var refused: Int
}

/// One choice of an offer: a near zone's offer with how near the device's engine says it is.
public struct OfferOption: Sendable, Hashable, Codable {
    public var offerID: Int
    public var zoneID: Int
    public var label: String
    public var title: String
    public var body: String
    /// `immediate`, `near` or `far`, as the device's engine ranged the zone's beacon.
    public var proximity: String
    /// The engine's accuracy in metres.
    public var accuracy: Double
}

/// An offer made to a device: the ranked choices among the near zones.
public struct OfferDelivery: Sendable, Hashable, Codable {
    public var id: Int
    /// The batch's last sighting, on the device's clock.
    public var time: Double
    public var choices: [OfferOption]
}

/// `GET /v1/devices/{id}/offers`.
public struct DeviceOffers: Sendable, Hashable, Codable {
    /// Newest first, at most ``OfferLimits/deliveriesKept``.
    public var deliveries: [OfferDelivery]
    public var delivered: Int
    /// Offers the rate limit held back from this device.
    public var refused: Int
}

/// Bounds of offers.
public struct OfferLimits: Sendable, Hashable {
    public var offersPerZone = 20
    public var titleLength = 100
    public var bodyLength = 1_000
    /// Deliveries kept per device; older ones are deleted.
    public var deliveriesKept = 50
    public init() {}
}
