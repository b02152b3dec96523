import BeaconKit
import Foundation

/// A queue venue (a DMV office, airport security): customers arrive at random, wait in a
/// waiting room until one of `counters.count` servers calls them (first come, first served),
/// are served and leave, or give up after their patience and leave unserved. Each customer is
/// a walker whose phone is a receiver named `customer-NNNN`. Generated from the scenario's seed,
/// so the same file gives the same customers everywhere; `customers` is the truth the
/// measurement is scored against.
///
/// The waiting room and the service area are zones bounded by walls: a customer joins the queue
/// when crossing into the waiting room (`door`) and reaches service when crossing into the
/// service area (`serviceGate`, on the way to a counter). Those two crossings are the truth's
/// times.
public struct QueueVenue: Sendable, Hashable {
    public enum ServiceTime: Sendable, Hashable {
        case exponential(mean: Double)
        /// A log-normal with this mean and σ of the logarithm.
        case logNormal(mean: Double, sigma: Double)
    }

    /// The beacon identities of the waiting room (the queue's entry zone) and of the counters
    /// (its service zone), named in the file by a beacon's `name`.
    public var entry: BeaconIdentity
    public var serviceIdentity: BeaconIdentity
    /// Poisson arrivals at `ratePerHour` from `from` until `to` (simulated seconds).
    public var ratePerHour: Double
    public var from: Double
    public var to: Double
    public var service: ServiceTime
    /// Mean of the exponential patience; nil: nobody gives up.
    public var patienceMean: Double?
    /// Where customers come from and go back to (out of range of every beacon).
    public var street: Position3D
    /// Where customers cross into the waiting room.
    public var door: Position3D
    /// The seats: a customer waits at a random point of this rectangle.
    public var seatsFrom: Position3D
    public var seatsTo: Position3D
    /// Where a called customer crosses into the service area (the counters' side).
    public var serviceGate: Position3D
    /// One per server.
    public var counters: [Position3D]
    public var speed: Double
    public var dutyCycle: Double
    public var customers: [QueueCustomer] = []

    public static let maximumCustomers = 5_000
}

/// One customer's truth.
public struct QueueCustomer: Sendable, Hashable, Codable {
    public var receiver: String
    /// When the customer crossed into the waiting room.
    public var arrival: Double
    /// When the customer crossed into the service area; nil for one who gave up.
    public var reachedService: Double?
    /// When the customer left the waiting room without service; nil for one served.
    public var gaveUp: Double?
    public var counter: Int?
    public var serviceSeconds: Double?

    public var served: Bool { reachedService != nil }
    /// The true wait, from joining to reaching service.
    public var wait: Double? { reachedService.map { $0 - arrival } }
}

extension Scenario {
    static func applyQueue(_ cursor: JSONCursor, to scenario: inout Scenario) throws(ScenarioError) {
        let object = try cursor.object(allowing: [
            "entryBeacon", "serviceBeacon", "ratePerHour", "from", "to", "service", "patience", "street", "door", "seats", "serviceGate", "counters", "speed", "dutyCycle",
        ])
        let bounds = (width: scenario.venue.width, height: scenario.venue.height)
        let ratePerHour = try object.required("ratePerHour").number(in: 0.01...10_000)
        let from = try object.number("from", default: 0, in: 0...Limits.duration)
        let to = try object.required("to").number(in: 0...Limits.duration)
        guard to > from else { throw ScenarioError(path: "\(cursor.path).to", expected: "a time after \"from\" (\(from))", found: "\(to)") }
        let serviceCursor = try object.required("service").object(allowing: ["distribution", "mean", "sigma"])
        let mean = try serviceCursor.required("mean").number(in: 1...86_400)
        let distribution = try serviceCursor.required("distribution")
        let service: QueueVenue.ServiceTime
        switch try distribution.string() {
        case "exponential": service = .exponential(mean: mean)
        case "lognormal": service = .logNormal(mean: mean, sigma: try serviceCursor.number("sigma", default: 0.5, in: 0.01...3))
        default: throw ScenarioError(path: distribution.path, expected: "\"exponential\" or \"lognormal\"", found: distribution.value.shortDescription)
        }
        let patience = try object.child("patience").map { patience throws(ScenarioError) in
            try patience.object(allowing: ["mean"]).required("mean").number(in: 1...86_400)
        }
        let seats = try object.required("seats").object(allowing: ["from", "to"])
        let counterCursors = try object.required("counters").elements()
        guard (1...100).contains(counterCursors.count) else {
            throw ScenarioError(path: "\(cursor.path).counters", expected: "1–100 counters (one per server)", found: "\(counterCursors.count)")
        }
        var counters: [Position3D] = []
        for counter in counterCursors { counters.append(try point(counter, within: bounds)) }
        func identity(_ key: String) throws(ScenarioError) -> BeaconIdentity {
            let nameCursor = try object.required(key)
            let name = try nameCursor.string()
            guard let beacon = scenario.beacons.first(where: { $0.name == name }) else {
                throw ScenarioError(path: nameCursor.path, expected: "the name of one of the scenario's beacons", found: nameCursor.value.shortDescription)
            }
            return beacon.identity
        }
        let entry = try identity("entryBeacon"), serviceIdentity = try identity("serviceBeacon")
        guard entry != serviceIdentity else {
            throw ScenarioError(path: "\(cursor.path).serviceBeacon", expected: "a beacon whose identity differs from the entry beacon's", found: "the same identity")
        }
        var venue = QueueVenue(
            entry: entry, serviceIdentity: serviceIdentity, ratePerHour: ratePerHour, from: from, to: to, service: service, patienceMean: patience,
            street: try point(object.required("street"), within: bounds), door: try point(object.required("door"), within: bounds),
            seatsFrom: try point(seats.required("from"), within: bounds), seatsTo: try point(seats.required("to"), within: bounds),
            serviceGate: try point(object.required("serviceGate"), within: bounds), counters: counters,
            speed: try object.number("speed", default: 1.2, in: 0.1...5),
            dutyCycle: try object.number("dutyCycle", default: 0.5, in: 0.001...1))
        let expected = ratePerHour * (to - from) / 3600
        guard expected <= Double(QueueVenue.maximumCustomers) / 2 else {
            throw ScenarioError(path: "\(cursor.path).ratePerHour", expected: "at most about \(QueueVenue.maximumCustomers / 2) customers expected",
                                found: "\(Int(expected)) (\(ratePerHour) per hour for \(Int(to - from)) s)")
        }
        var generator = SeededGenerator(seed: scenario.seed).derived(0x5155_4555)
        let (customers, receivers) = venue.generate(using: &generator)
        try guardLinks((scenario.receivers.count + receivers.count) * scenario.beacons.count, path: cursor.path)
        for receiver in receivers where scenario.receivers.contains(where: { $0.name == receiver.name }) {
            throw ScenarioError(path: "\(cursor.path)", expected: "no receiver already named \(receiver.name)", found: "one")
        }
        venue.customers = customers
        scenario.receivers += receivers
        scenario.queue = venue
    }

    private static func guardLinks(_ links: Int, path: String) throws(ScenarioError) {
        guard links <= Limits.links else {
            throw ScenarioError(path: path, expected: "at most \(Limits.links) receiver–beacon links with the generated customers", found: "\(links)")
        }
    }
}

extension QueueVenue {
    /// Draws the arrivals, patience and service times and plays the queue: first come, first
    /// served, each customer called by the first counter free (a walk to it keeps it busy),
    /// giving up when not called within their patience.
    func generate(using generator: inout SeededGenerator) -> ([QueueCustomer], [SimulatedReceiver]) {
        var customers: [QueueCustomer] = []
        var receivers: [SimulatedReceiver] = []
        var free = Array(repeating: from, count: counters.count)
        let approach = street.distance(to: door) / speed
        var time = max(from, approach)
        while customers.count < Self.maximumCustomers {
            time += -log(1 - generator.unit()) * 3600 / ratePerHour
            guard time < to else { break }
            let seat = Position3D(x: generator.uniform(min(seatsFrom.x, seatsTo.x), max(seatsFrom.x, seatsTo.x)),
                             y: generator.uniform(min(seatsFrom.y, seatsTo.y), max(seatsFrom.y, seatsTo.y)), z: seatsFrom.z)
            let patience = patienceMean.map { -log(1 - generator.unit()) * $0 }
            let serviceSeconds = switch service {
            case .exponential(let mean): -log(1 - generator.unit()) * mean
            case .logNormal(let mean, let sigma): exp(log(mean) - sigma * sigma / 2 + sigma * generator.gaussian())
            }
            let name = String(format: "customer-%04d", customers.count + 1)
            let seated = time + door.distance(to: seat) / speed
            let counter = free.indices.min { free[$0] < free[$1] } ?? 0
            let called = max(seated, free[counter])
            var waypoints = [WalkerPath.Waypoint(street), WalkerPath.Waypoint(door)]
            if let patience, called - seated > patience {
                waypoints.append(WalkerPath.Waypoint(seat, pause: patience))
                waypoints += [WalkerPath.Waypoint(door), WalkerPath.Waypoint(street)]
                let gaveUp = seated + patience + seat.distance(to: door) / speed
                customers.append(QueueCustomer(receiver: name, arrival: time, reachedService: nil, gaveUp: gaveUp))
            } else {
                let place = counters[counter]
                let reached = called + seat.distance(to: serviceGate) / speed
                let atCounter = reached + serviceGate.distance(to: place) / speed
                free[counter] = atCounter + serviceSeconds
                waypoints.append(WalkerPath.Waypoint(seat, pause: called - seated))
                waypoints += [WalkerPath.Waypoint(serviceGate), WalkerPath.Waypoint(place, pause: serviceSeconds),
                              WalkerPath.Waypoint(serviceGate), WalkerPath.Waypoint(door), WalkerPath.Waypoint(street)]
                customers.append(QueueCustomer(receiver: name, arrival: time, reachedService: reached, gaveUp: nil,
                                               counter: counter, serviceSeconds: serviceSeconds))
            }
            receivers.append(SimulatedReceiver(name: name, placement: .walking(WalkerPath(waypoints: waypoints, speed: speed, start: time - approach)),
                                               dutyCycle: dutyCycle))
        }
        return (customers, receivers)
    }
}
