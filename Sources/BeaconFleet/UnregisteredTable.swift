import BeaconKit
import Foundation

/// An identity under the organisation's UUID that the registry does not know, with where it was
/// heard so that someone can walk there and find it.
public struct UnregisteredSighting: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var firstHeard: Double
    public var lastHeard: Double
    public var packets: Int
    /// The strongest RSSI per gateway that heard it (at most `gatewaysKept`).
    public var strongestByGateway: [String: Int8]

    static let gatewaysKept = 8

    /// The gateway that heard it strongest: the place to start looking.
    public var nearestGateway: (name: String, rssi: Int8)? {
        strongestByGateway.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
            .map { ($0.key, $0.value) }
    }
}

/// Unknown identities, bounded. A rogue sending thousands of random minors is told apart from a
/// new beacon by how many new identities one gateway hears within a window: once that is a flood,
/// its identities are counted, not stored, so it neither fills memory nor pushes real finds out.
struct UnregisteredTable: Sendable {
    struct FloodWindow: Sendable {
        var start: Double
        var newIdentities: Int
        var uncounted = 0
        var strongest: Int8 = -128
        var activeSince: Double?
        var lastFlooding: Double = 0
    }

    private(set) var entries: [BeaconIdentity: UnregisteredSighting] = [:]
    private(set) var floods: [String: FloodWindow] = [:]
    /// Identities neither stored nor part of a flood because the table was full.
    private(set) var dropped = 0

    mutating func observe(_ identity: BeaconIdentity, gateway: String, rssi: Int8?, at time: Double,
                          settings: FleetSettings) {
        if var known = entries[identity] {
            known.packets += 1
            known.lastHeard = max(known.lastHeard, time)
            if let rssi { keepStrongest(&known, gateway: gateway, rssi: rssi) }
            entries[identity] = known
            return
        }
        let flooding = countNewIdentity(gateway: gateway, rssi: rssi, at: time, settings: settings)
        guard !flooding else { return }
        guard entries.count < settings.unregisteredLimit else {
            dropped += 1
            return
        }
        var entry = UnregisteredSighting(identity: identity, firstHeard: time, lastHeard: time, packets: 1,
                                         strongestByGateway: [:])
        if let rssi { keepStrongest(&entry, gateway: gateway, rssi: rssi) }
        entries[identity] = entry
    }

    private func keepStrongest(_ entry: inout UnregisteredSighting, gateway: String, rssi: Int8) {
        if let old = entry.strongestByGateway[gateway] {
            if rssi > old { entry.strongestByGateway[gateway] = rssi }
        } else if entry.strongestByGateway.count < UnregisteredSighting.gatewaysKept {
            entry.strongestByGateway[gateway] = rssi
        } else if let weakest = entry.strongestByGateway.min(by: { $0.value < $1.value }), weakest.value < rssi {
            entry.strongestByGateway[weakest.key] = nil
            entry.strongestByGateway[gateway] = rssi
        }
    }

    /// Counts a first sighting of an unknown identity at a gateway; true while that gateway floods.
    private mutating func countNewIdentity(gateway: String, rssi: Int8?, at time: Double,
                                           settings: FleetSettings) -> Bool {
        var window = floods[gateway] ?? FloodWindow(start: time, newIdentities: 0)
        if time - window.start >= settings.floodWindow {
            window.start = time
            window.newIdentities = 0
        }
        window.newIdentities += 1
        if let rssi { window.strongest = max(window.strongest, rssi) }
        if window.newIdentities >= settings.floodIdentities {
            if window.activeSince == nil { window.activeSince = time }
            window.lastFlooding = time
        }
        let flooding = window.activeSince != nil
        if flooding { window.uncounted += 1 }
        // Gateways are authenticated and few, but a bound costs nothing.
        if floods[gateway] != nil || floods.count < 100_000 { floods[gateway] = window }
        return flooding
    }

    /// Forgets identities silent for longer than the memory and floods that stopped.
    mutating func expire(now: Double, settings: FleetSettings) {
        entries = entries.filter { now - $0.value.lastHeard <= settings.unregisteredMemory }
        for (gateway, window) in floods {
            if window.activeSince != nil, now - window.lastFlooding > settings.floodWindow * 2 {
                floods[gateway]?.activeSince = nil
                floods[gateway]?.uncounted = 0
            } else if window.activeSince == nil && now - window.start > settings.floodWindow * 2 {
                floods[gateway] = nil
            }
        }
    }
}
