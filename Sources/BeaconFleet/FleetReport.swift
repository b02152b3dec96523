import BeaconKit
import Foundation

/// How one gateway hears one beacon: the learnt expected coverage.
public struct LinkCoverage: Sendable, Hashable, Codable {
    public var gateway: String
    public var packetsPerSecond: Double
    public var rssi: Double?
    public var lastHeard: Double
    /// Counted in the beacon's expected coverage (learnt and heard often enough).
    public var expected: Bool
    /// The link's normal RSSI once drift has learnt it.
    public var normalRSSI: Double?
}

/// One row of the fleet table.
public struct BeaconHealth: Sendable, Hashable, Codable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    public var label: String
    public var siteID: Int
    /// The worst level among the findings.
    public var state: HealthLevel
    public var findings: [FleetFinding]
    public var lastHeard: Double?
    public var heardBy: [LinkCoverage]
    public var batteryMillivolts: Int?
    public var batteryDaysLeft: Double?
    /// The silence after which it counts as missing, from its expected coverage.
    public var missingAfter: Double?

    public var identity: BeaconIdentity { BeaconIdentity(uuid: uuid, major: major, minor: minor) }
}

extension FleetMonitor {
    /// The fleet table as of the last `evaluate`, coverage as of now.
    public func report(now: Double) -> [BeaconHealth] {
        watches.map { health(of: $0, now: now) }
    }

    public func health(of identity: BeaconIdentity, now: Double) -> BeaconHealth? {
        indexByIdentity[identity].map { health(of: watches[$0], now: now) }
    }

    func health(of watch: BeaconWatch, now: Double) -> BeaconHealth {
        let findings = watch.findings.values.sorted { $0.check.rawValue < $1.check.rawValue }
        let coverage = watch.links.map { link in
            LinkCoverage(gateway: gateways[link.gateway].gateway.name, packetsPerSecond: link.rate.perSecond,
                         rssi: link.smoothedRSSI, lastHeard: link.rate.lastHeard,
                         expected: gateways[link.gateway].gateway.isFixed && link.isExpected(now: now, settings: settings),
                         normalRSSI: link.drift.normalLevel)
        }.sorted { $0.packetsPerSecond > $1.packetsPerSecond }
        let expectedRate = coverage.filter(\.expected).reduce(0) { $0 + $1.packetsPerSecond }
        let type = BatteryType.named(watch.beacon.battery)
        let identity = watch.beacon.identity
        return BeaconHealth(
            uuid: identity.uuid, major: identity.major, minor: identity.minor, label: watch.beacon.label,
            siteID: watch.beacon.siteID, state: findings.map(\.level).max() ?? .ok, findings: findings,
            lastHeard: watch.lastHeard, heardBy: coverage, batteryMillivolts: watch.battery.latestMillivolts.map(Int.init),
            batteryDaysLeft: watch.battery.daysLeft(cutoff: type.cutoffMillivolts),
            missingAfter: expectedRate > 0 ? silenceThreshold(rate: expectedRate) : nil)
    }

    /// Identities under the organisation's UUIDs that the registry does not know.
    public var unregisteredIdentities: [UnregisteredSighting] {
        unregistered.entries.values.sorted { $0.identity < $1.identity }
    }

    /// Findings about gateways (identity floods heard near them).
    public var gatewayHealth: [String: [FleetFinding]] {
        gatewayFindings.mapValues { $0.values.sorted { $0.check.rawValue < $1.check.rawValue } }
    }

    /// How many beacons are in each state, for the gauges.
    public func stateCounts() -> [HealthLevel: Int] {
        var counts = Dictionary(uniqueKeysWithValues: HealthLevel.allCases.map { ($0, 0) })
        for watch in watches {
            counts[watch.findings.values.map(\.level).max() ?? .ok, default: 0] += 1
        }
        return counts
    }
}
