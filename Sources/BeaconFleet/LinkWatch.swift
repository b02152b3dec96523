import BeaconKit

/// One gateway's view of one beacon: how often and how strongly it hears it.
struct LinkWatch: Sendable {
    let gateway: Int
    var rate: ReceptionRate
    var drift = DriftDetector()
    var strongestRSSI: Int8 = -128
    /// Exponentially smoothed RSSI, for the fleet table.
    var smoothedRSSI: Double?

    init(gateway: Int, firstHeard: Double) {
        self.gateway = gateway
        self.rate = ReceptionRate(firstHeard: firstHeard)
    }

    /// Counted in the beacon's expected coverage. The caller also requires a fixed gateway: a
    /// phone walking away is not the beacon going missing.
    func isExpected(now: Double, settings: FleetSettings) -> Bool {
        rate.packets >= settings.learningPackets
            && now - rate.firstHeard >= settings.learningSeconds
            && rate.perSecond >= settings.minimumExpectedRate
    }
}

/// Evidence that piles up packet by packet and is forgotten after a quiet hold.
struct Evidence: Sendable, Hashable {
    var count = 0
    var last: Double = 0
    var detail = ""

    mutating func add(at time: Double, hold: Double, detail: String) {
        if count == 0 || time - last > hold { count = 0 }
        count += 1
        last = time
        self.detail = detail
    }

    func holds(now: Double, needed: Int, hold: Double) -> Bool {
        count >= needed && now - last <= hold
    }
}

/// A transmitter address seen sending this identity.
struct AddressSeen: Sendable, Hashable {
    var address: BluetoothAddress
    var firstHeard: Double
    var lastHeard: Double
}
