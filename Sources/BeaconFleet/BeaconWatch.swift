import BeaconKit

/// Everything the checks keep about one registered beacon. Bounded: at most
/// `linksPerBeacon` links, four addresses and a fixed battery ring.
struct BeaconWatch: Sendable {
    var beacon: FleetBeacon
    var links: [LinkWatch] = []
    var lastHeard: Double?
    var addresses: [AddressSeen] = []
    var interleavedAddresses = Evidence()
    var lastInterleavedSecond = -1.0
    var twoPlaces = Evidence()
    var lastStrong: (gateway: Int, time: Double)?
    var outOfPlace = Evidence()
    var outOfPlaceIsForeignSite = false
    var powerMismatch = Evidence()
    var powerFlips = Evidence()
    var lastMeasuredPower: Int8?
    var interval = IntervalWatch()
    var battery = BatteryTrend()
    var badTelemetry = Evidence()
    var findings: [FleetCheck: FleetFinding] = [:]

    static let addressesKept = 4

    init(beacon: FleetBeacon) {
        self.beacon = beacon
    }

    mutating func linkIndex(gateway: Int, time: Double, settings: FleetSettings) -> Int? {
        if let index = links.firstIndex(where: { $0.gateway == gateway }) { return index }
        if links.count < settings.linksPerBeacon {
            links.append(LinkWatch(gateway: gateway, firstHeard: time))
            return links.count - 1
        }
        // Full: a new link replaces the rarest one only once that one is clearly not expected.
        guard let rarest = links.indices.min(by: { links[$0].rate.perSecond < links[$1].rate.perSecond }),
              !links[rarest].isExpected(now: time, settings: settings) else { return nil }
        links[rarest] = LinkWatch(gateway: gateway, firstHeard: time)
        return rarest
    }

    /// Records the address; true when another address of this identity is sending at the same
    /// time (interleaved), which a rotating address never does.
    mutating func noteAddress(_ address: BluetoothAddress, at time: Double, overlapWindow: Double) -> BluetoothAddress? {
        var interleaved: BluetoothAddress?
        if let index = addresses.firstIndex(where: { $0.address == address }) {
            let mine = addresses[index]
            for other in addresses where other.address != address {
                if other.lastHeard > mine.firstHeard && time - other.lastHeard <= overlapWindow {
                    interleaved = other.address
                }
            }
            addresses[index].lastHeard = max(mine.lastHeard, time)
        } else {
            let seen = AddressSeen(address: address, firstHeard: time, lastHeard: time)
            if addresses.count < Self.addressesKept {
                addresses.append(seen)
            } else if let stalest = addresses.indices.min(by: { addresses[$0].lastHeard < addresses[$1].lastHeard }) {
                addresses[stalest] = seen
            }
        }
        return interleaved
    }
}

/// The advertising interval, seen two ways: from TLM's advertising count and uptime when the
/// beacon sends them, and from the shortest gap between packets at one gateway otherwise.
struct IntervalWatch: Sendable {
    var windowStart: Double?
    var shortestGap = Double.infinity
    var windowPackets = 0
    var baseline: Double?
    var learning: [Double] = []
    var changedWindows = 0
    var latest: Double?
    var firstTelemetry: (count: UInt32, uptime: UInt32)?
    /// Seconds per advertising event by the beacon's own count, when it sends TLM.
    var telemetryInterval: Double?
    var telemetryBaseline: Double?

    /// The latest estimate against its learnt baseline, TLM's when there is one.
    var ratioToBaseline: (latest: Double, baseline: Double)? {
        if let latest = telemetryInterval, let baseline = telemetryBaseline { return (latest, baseline) }
        if let latest, let baseline { return (latest, baseline) }
        return nil
    }

    static let window = 600.0
    /// Gaps shorter than this are one advertising event heard on two channels, not the interval.
    static let shortestInterval = 0.018

    mutating func record(gap: Double, at time: Double) {
        if windowStart == nil { windowStart = time }
        windowPackets += 1
        if gap >= Self.shortestInterval { shortestGap = min(shortestGap, gap) }
    }

    /// Closes the window if it is over; returns the window's estimate when it had enough packets.
    mutating func closeWindow(now: Double) -> Double? {
        guard let start = windowStart, now - start >= Self.window else { return nil }
        defer {
            windowStart = now
            shortestGap = .infinity
            windowPackets = 0
        }
        guard windowPackets >= 50, shortestGap.isFinite else { return nil }
        latest = shortestGap
        if baseline == nil {
            learning.append(shortestGap)
            if learning.count == 3 {
                baseline = learning.sorted()[1]
                learning = []
            }
            return nil
        }
        return shortestGap
    }
}
