import BeaconKit
import BeaconRotation
import Foundation

/// What the detector knows of a site: where its fixed beacons and gateways are, which beacons
/// are carried, and the radio figures the checks allow for. Built from the registry (server) or
/// from a scenario (simulator).
public struct SecuritySite: Sendable, Hashable {
    /// A registered beacon. `position` is nil for a carried one (a tag, a badge).
    public struct Beacon: Sendable, Hashable {
        public var name: String
        public var position: Position3D?
        /// RSSI at 1 m the beacon was calibrated to; a spoofer cannot change what the registry holds.
        public var measuredPower: MeasuredPower
        /// The address it transmits from, when the registry knows it; otherwise the first one heard.
        public var address: BluetoothAddress?

        public init(name: String, position: Position3D?, measuredPower: MeasuredPower = .appleDefault, address: BluetoothAddress? = nil) {
            self.name = name
            self.position = position
            self.measuredPower = measuredPower
            self.address = address
        }
    }

    public var beacons: [BeaconIdentity: Beacon]
    /// Fixed receivers (gateways) by name; a phone's position is unknown and it is not listed.
    public var receivers: [String: Position3D]
    /// Rotating beacons (docs/security.md, "Rotating identities"), by their registered identity:
    /// what they send is resolved to it, and an identity of a past period is a replay.
    public var rotations: [BeaconIdentity: RotatingIdentity]
    public var settings: SecuritySettings

    public init(beacons: [BeaconIdentity: Beacon], receivers: [String: Position3D], rotations: [BeaconIdentity: RotatingIdentity] = [:],
                settings: SecuritySettings = SecuritySettings()) {
        self.beacons = beacons
        self.receivers = receivers
        self.rotations = rotations
        self.settings = settings
    }
}

/// The thresholds of the checks, fixed before any evaluation run (docs/security.md explains each).
public struct SecuritySettings: Sendable, Hashable {
    /// Path-loss exponent used to turn an RSSI into the farthest the beacon can be. A low value
    /// errs toward far, so walls (which only lower RSSI) never make an honest sighting look close.
    public var pathLossExponent = 2.0
    /// dB an honest sighting may rise above the model (fading peaks, a strong transmitter, a good antenna).
    public var rangeMargin = 12.0
    /// Metres added to every distance bound (antenna heights, position survey errors).
    public var distanceSlack = 2.0
    /// A person's fastest walk, metres per second; a carried beacon cannot move faster.
    public var walkingSpeed = 2.0
    /// Impossible sightings needed within `strikeWindow` before an alert: single fading peaks
    /// are not attacks.
    public var strikesToAlert = 5
    public var strikeWindow = 30.0
    /// A receiver's timestamp may lead the server's clock by this much (seconds).
    public var clockLeadTolerance = 2.0
    /// A sighting older than this on arrival was held back or replayed (seconds).
    public var maximumSightingAge = 30.0
    /// How far a receiver's clock offset may wander from what it was when first heard (seconds).
    public var clockJumpTolerance = 3.0
    /// Sightings a receiver's first offsets are averaged over.
    public var clockLearningSightings = 50
    /// dB the recent mean RSSI of a fixed beacon at a fixed gateway may rise above its long mean.
    public var rssiShiftThreshold = 10.0
    /// Sightings of a fixed beacon at a gateway before its RSSI baseline is trusted.
    public var rssiLearningSightings = 300
    /// Weights of the recent and long running means of RSSI (per sighting).
    public var rssiRecentWeight = 0.1
    public var rssiLongWeight = 0.002
    /// A raised alert on the same subject and kind is not raised again for this long (seconds).
    public var alertHoldoff = 300.0
    /// How long an identity's last sightings count for the trace check (seconds).
    public var traceMemory = 60.0
    /// Most identities, receivers and beacon–gateway pairs tracked; the least recently heard are
    /// forgotten first, so a flood of made-up identities cannot grow memory.
    public var identityCapacity = 10_000
    public var receiverCapacity = 10_000
    public var pairCapacity = 100_000
    /// The neighbour check (a phone claiming a fixed beacon whose neighbours it does not hear):
    /// a fixed beacon's neighbours are the fixed beacons a receiver at its place hears at this
    /// RSSI or more, predicted with `neighbourPathLossExponent` (high, so it errs toward near).
    public var neighbourHearingRSSI = -90.0
    public var neighbourPathLossExponent = 3.0
    /// At most this many nearest neighbours are kept per beacon.
    public var neighbourLimit = 8
    /// A beacon with fewer registered neighbours is not checked: one neighbour switched off must
    /// not make a phone look like a victim.
    public var minimumNeighbours = 2
    /// A phone's sighting claims to be at a beacon when its RSSI is within this many dB of the
    /// beacon's measured power (about 3 m with exponent 2).
    public var neighbourClaimMargin = 10.0
    /// Seconds of a phone's sightings the neighbours are looked for in; a phone heard for less
    /// than this is not judged yet.
    public var neighbourWindow = 30.0
    /// The place check (a phone hearing two fixed beacons too far apart to be near both): each
    /// beacon's median RSSI over `placeWindow` seconds of the phone's own clock, from at least
    /// `placeMinimumSamples` readings, bounds its distance with `placeMargin` dB instead of
    /// `rangeMargin`. A median does not ride fading peaks, so the margin only has to cover
    /// a beacon louder than registered and a phone's antenna gain.
    public var checksPlaces = true
    public var placeWindow = 4.0
    public var placeMargin = 6.0
    public var placeMinimumSamples = 3

    public init() {}
}

extension SecuritySite {
    /// The farthest (metres) a beacon of this measured power can be when its median RSSI over a
    /// short window is `median`: the place check's bound, with `placeMargin` and the slack.
    func medianDistanceBound(median: Double, measuredPower: MeasuredPower) -> Double {
        distanceBound(level: median, measuredPower: measuredPower, margin: settings.placeMargin)
    }

    /// The log-distance bound both checks share, with their own margin.
    private func distanceBound(level: Double, measuredPower: MeasuredPower, margin: Double) -> Double {
        let exponent = (Double(measuredPower.dBm) + margin - level) / (10 * settings.pathLossExponent)
        return Swift.max(0.1, pow(10, exponent)) + settings.distanceSlack
    }

    /// The farthest (metres) a beacon of this measured power can be when heard at `rssi`, with
    /// the site's margin and slack. Nil when the RSSI is unknown.
    func distanceBound(rssi: Int8?, measuredPower: MeasuredPower) -> Double? {
        guard let rssi else { return nil }
        return distanceBound(level: Double(rssi), measuredPower: measuredPower, margin: settings.rangeMargin)
    }
}
