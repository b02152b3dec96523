import BeaconKit
import Foundation

/// Fleet health: checks every sighting against the registry, and judges every beacon on demand.
///
/// Pure and clock-driven like the engine: `observe` takes sightings in their own time,
/// `gatewayReported` says a gateway is alive, and `evaluate(now:)` runs the time-based checks and
/// returns the findings whose level changed. Cost per sighting is constant; cost per evaluation
/// grows with the registry, never with history.
public struct FleetMonitor: Sendable {
    public private(set) var settings: FleetSettings
    var watches: [BeaconWatch] = []
    var indexByIdentity: [BeaconIdentity: Int] = [:]
    var indexByAddress: [BluetoothAddress: Int] = [:]
    var gateways: [GatewayWatch] = []
    var gatewayIndexByName: [String: Int] = [:]
    var organisationUUIDs: Set<UUID>
    var unregistered = UnregisteredTable()
    var gatewayFindings: [String: [FleetCheck: FleetFinding]] = [:]
    var unregisteredFindings: [BeaconIdentity: FleetFinding] = [:]

    static let gatewayLimit = 100_000

    public init(beacons: [FleetBeacon], gateways: [FleetGateway], organisationUUIDs: Set<UUID>,
                settings: FleetSettings = FleetSettings()) {
        self.settings = settings
        self.organisationUUIDs = organisationUUIDs
        for gateway in gateways { _ = gatewayIndex(for: gateway.name, registered: gateway) }
        for beacon in beacons where indexByIdentity[beacon.identity] == nil {
            indexByIdentity[beacon.identity] = watches.count
            watches.append(BeaconWatch(beacon: beacon))
        }
    }

    /// The registry changed: learnt history is kept for identities that stay.
    public mutating func updateRegistry(beacons: [FleetBeacon], gateways: [FleetGateway], organisationUUIDs: Set<UUID>) {
        self.organisationUUIDs = organisationUUIDs
        for gateway in gateways { _ = gatewayIndex(for: gateway.name, registered: gateway) }
        var kept: [BeaconWatch] = []
        var index: [BeaconIdentity: Int] = [:]
        for beacon in beacons where index[beacon.identity] == nil {
            var watch = indexByIdentity[beacon.identity].map { watches[$0] } ?? BeaconWatch(beacon: beacon)
            watch.beacon = beacon
            index[beacon.identity] = kept.count
            kept.append(watch)
        }
        watches = kept
        indexByIdentity = index
        indexByAddress = [:]
        for (position, watch) in watches.enumerated() {
            for seen in watch.addresses { indexByAddress[seen.address] = position }
        }
    }

    /// The index of a gateway by name, for `observe(_:gateway:)`; nil only past the gateway bound.
    public mutating func gatewayIndex(for name: String) -> Int? {
        gatewayIndex(for: name, registered: nil)
    }

    private mutating func gatewayIndex(for name: String, registered: FleetGateway?) -> Int? {
        if let index = gatewayIndexByName[name] {
            if let registered { gateways[index].gateway = registered }
            return index
        }
        guard gateways.count < Self.gatewayLimit else { return nil }
        gateways.append(GatewayWatch(gateway: registered ?? FleetGateway(name: name, siteID: -1)))
        gatewayIndexByName[name] = gateways.count - 1
        return gateways.count - 1
    }

    /// A gateway delivered a batch (even an empty one): it is up.
    public mutating func gatewayReported(_ name: String, at time: Double) {
        guard let index = gatewayIndex(for: name) else { return }
        gateways[index].reported(at: time, timeout: settings.gatewayTimeout)
    }

    public mutating func observe(_ sighting: Sighting) {
        guard let gateway = gatewayIndex(for: sighting.receiver) else { return }
        observe(sighting, gateway: gateway)
    }

    public mutating func observe(_ sighting: Sighting, gateway: Int) {
        // A sighting proves its gateway is up, for callers that never report batches.
        gateways[gateway].reported(at: sighting.time, timeout: settings.gatewayTimeout)
        switch sighting.frame {
        case .iBeacon(let frame):
            observe(frame, sighting: sighting, gateway: gateway)
        case .eddystone(.tlm(let telemetry)):
            guard let index = indexByAddress[sighting.address] else { return }
            recordTelemetry(telemetry, beacon: index, at: sighting.time)
        default:
            return
        }
    }

    private mutating func observe(_ frame: IBeaconFrame, sighting: Sighting, gateway: Int) {
        let time = sighting.time
        guard let index = indexByIdentity[frame.identity] else {
            if organisationUUIDs.contains(frame.identity.uuid) {
                unregistered.observe(frame.identity, gateway: gateways[gateway].gateway.name, rssi: sighting.rssi,
                                     at: time, settings: settings)
            }
            return
        }
        var watch = watches[index]
        watch.lastHeard = max(watch.lastHeard ?? time, time)
        if let linkIndex = watch.linkIndex(gateway: gateway, time: time, settings: settings) {
            let link = watch.links[linkIndex].rate
            if link.packets > 0 { watch.interval.record(gap: time - link.lastHeard, at: time) }
            countPacket(in: &watch.links[linkIndex], rssi: sighting.rssi, at: time)
        }
        noteTransmitter(&watch, beacon: index, address: sighting.address, frame: frame, at: time)
        if let rssi = sighting.rssi, rssi >= settings.strongRSSI {
            notePlace(&watch, gateway: gateway, rssi: rssi, at: time)
        }
        watches[index] = watch
    }

    private func countPacket(in link: inout LinkWatch, rssi: Int8?, at time: Double) {
        let gatewayWatch = gateways[link.gateway]
        let previous = link.rate.lastHeard
        let learntThreshold = link.rate.packets >= settings.learningPackets
            ? 2 * silenceThreshold(rate: link.rate.perSecond) : .infinity
        link.rate.count(at: time, gapStart: gatewayWatch.upSince ?? previous, memory: settings.rateMemory,
                        longestCountedGap: learntThreshold)
        if let rssi {
            link.strongestRSSI = max(link.strongestRSSI, rssi)
            link.smoothedRSSI = link.smoothedRSSI.map { $0 * 0.9 + Double(rssi) * 0.1 } ?? Double(rssi)
            link.drift.record(rssi: rssi, at: time, listeningSince: gatewayWatch.upSince ?? -.infinity, settings: settings)
        }
    }

    private mutating func noteTransmitter(_ watch: inout BeaconWatch, beacon: Int, address: BluetoothAddress,
                                          frame: IBeaconFrame, at time: Double) {
        if indexByAddress[address] == nil, watch.addresses.count < BeaconWatch.addressesKept {
            indexByAddress[address] = beacon
        }
        if let other = watch.noteAddress(address, at: time, overlapWindow: 10) {
            // Once per second, so that the evidence counts seconds of overlap, not packets.
            let second = time.rounded(.down)
            if second != watch.lastInterleavedSecond {
                watch.lastInterleavedSecond = second
                watch.interleavedAddresses.add(at: time, hold: settings.evidenceHold,
                                               detail: "sent at the same time from \(other) and \(address)")
            }
        }
        let power = frame.measuredPower.dBm
        if let registered = watch.beacon.measuredPower, power != registered {
            watch.powerMismatch.add(at: time, hold: settings.evidenceHold,
                                    detail: "advertises measured power \(power) dBm, the registry says \(registered) dBm")
        }
        if let last = watch.lastMeasuredPower, last != power {
            watch.powerFlips.add(at: time, hold: settings.evidenceHold,
                                 detail: "measured power alternates between \(last) and \(power) dBm")
        }
        watch.lastMeasuredPower = power
    }

    private func distance(between first: Int, and second: Int) -> Double? {
        guard let a = gateways[first].gateway.position, let b = gateways[second].gateway.position,
              gateways[first].gateway.siteID == gateways[second].gateway.siteID else { return nil }
        return a.distance(to: b)
    }

    private func areFarApart(_ first: Int, _ second: Int) -> Bool {
        let a = gateways[first].gateway
        let b = gateways[second].gateway
        if a.siteID >= 0 && b.siteID >= 0 && a.siteID != b.siteID { return true }
        return (distance(between: first, and: second) ?? 0) > settings.cloneDistance
    }

    private func notePlace(_ watch: inout BeaconWatch, gateway: Int, rssi: Int8, at time: Double) {
        let gatewayInfo = gateways[gateway].gateway
        if let last = watch.lastStrong, last.gateway != gateway, time - last.time <= 2, areFarApart(last.gateway, gateway) {
            let other = gateways[last.gateway].gateway.name
            watch.twoPlaces.add(at: time, hold: settings.evidenceHold,
                                detail: "heard strongly at \(other) and \(gatewayInfo.name) at the same time")
        }
        watch.lastStrong = (gateway, time)
        guard watch.beacon.isFixed, gatewayInfo.siteID >= 0 else { return }
        if gatewayInfo.siteID != watch.beacon.siteID {
            watch.outOfPlaceIsForeignSite = true
            watch.outOfPlace.add(at: time, hold: settings.evidenceHold,
                                 detail: "heard at \(rssi) dBm by \(gatewayInfo.name) at site \(gatewayInfo.siteID); deployed at site \(watch.beacon.siteID)")
        } else if let here = gatewayInfo.position, let planned = watch.beacon.position,
                  here.distance(to: planned) > settings.outOfPlaceDistance {
            watch.outOfPlaceIsForeignSite = false
            let metres = Int(here.distance(to: planned).rounded())
            watch.outOfPlace.add(at: time, hold: settings.evidenceHold,
                                 detail: "heard at \(rssi) dBm by \(gatewayInfo.name), \(metres) m from where it is deployed")
        }
    }
}

/// A gateway's liveness: up while it reports, with when it came back.
struct GatewayWatch: Sendable {
    var gateway: FleetGateway
    var lastReport: Double?
    /// When the current up period began; nil while it has never reported.
    var upSince: Double?

    mutating func reported(at time: Double, timeout: Double) {
        if let last = lastReport, time - last <= timeout {
            lastReport = max(last, time)
        } else {
            upSince = time
            lastReport = time
        }
    }

    func isUp(now: Double, timeout: Double) -> Bool {
        guard let last = lastReport else { return false }
        return now - last <= timeout
    }
}
