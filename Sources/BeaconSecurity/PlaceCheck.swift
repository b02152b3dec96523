import BeaconKit
import Foundation

/// A phone hearing two fixed beacons too loudly, over one short window of its own clock, to be
/// near both: the evidence of the place check (docs/security.md, "Spoof and replay detection").
struct PlaceConflict: Sendable {
    var other: BeaconIdentity
    var median: Double
    var bound: Double
    var otherMedian: Double
    var otherBound: Double
    var apart: Double
    /// How many other beacons the phone hears in the window could be heard where one of the two
    /// is and not where the other is; when that is a tie, how many of each one's registered
    /// neighbours it hears as loudly as it would at that beacon.
    var support: Int
    var otherSupport: Int

    /// Metres by which the two places miss each other.
    var gap: Double { apart - bound - otherBound }

    /// The conflict that names the sighting's beacon as the copy, if any: its median bound, the
    /// other's and a walk across the window fall short of the distance between them, no other
    /// beacon heard places the phone at the sighting's beacon rather than the other, and some
    /// place it at the other (or, when none tell, some of the other's neighbours are heard as
    /// if there and none of the sighting's beacon's are). Costs one pass over the phone's recent beacons
    /// (at most ``ReceiverHearing/limit``), and a second one when a pair conflicts.
    static func find(for observation: SecurityObservation, signal: RecentSignal, in hearing: ReceiverHearing,
                     site: SecuritySite, neighbours: NeighbourIndex, suspected: (BeaconIdentity) -> Bool) -> PlaceConflict? {
        let settings = site.settings
        guard settings.checksPlaces, let beacon = site.beacons[observation.identity], let position = beacon.position else { return nil }
        let since = observation.receiverTime - settings.placeWindow
        guard let median = signal.median(since: since, minimum: settings.placeMinimumSamples) else { return nil }
        let bound = site.medianDistanceBound(median: median, measuredPower: beacon.measuredPower)
        let walk = settings.walkingSpeed * settings.placeWindow
        let shortest = 0.1 + settings.distanceSlack
        var others: [HeardPlace]?
        var found: PlaceConflict?
        for (identity, otherSignal) in hearing.beacons where identity != observation.identity {
            guard let other = site.beacons[identity], let otherPosition = other.position else { continue }
            let apart = position.distance(to: otherPosition)
            // Most beacons are near enough to rule out before their median is taken.
            guard apart > bound + shortest + walk,
                  let otherMedian = otherSignal.median(since: since, minimum: settings.placeMinimumSamples) else { continue }
            let otherBound = site.medianDistanceBound(median: otherMedian, measuredPower: other.measuredPower)
            guard apart > bound + otherBound + walk else { continue }
            // Which one is the copy: the one fewer of the other beacons heard agree with (and
            // disagree with the other).
            let heard = others ?? medianBounds(in: hearing, since: since, site: site)
            others = heard
            var support = 0, otherSupport = 0
            // Beacons already found copied elsewhere are no witnesses.
            let witnesses = heard.filter { $0.identity != identity && $0.identity != observation.identity && !suspected($0.identity) }
            for candidate in witnesses {
                // A beacon heard weakly could be heard at either place and says nothing.
                let here = position.distance(to: candidate.position) <= bound + candidate.bound + walk
                let there = otherPosition.distance(to: candidate.position) <= otherBound + candidate.bound + walk
                if here && !there { support += 1 }
                if there && !here { otherSupport += 1 }
            }
            if otherSupport == support {
                // No witness tells the places apart: count each one's registered neighbours
                // among them heard at least as loudly as they would be there.
                support = loudNeighbours(of: observation.identity, among: witnesses, site: site, neighbours: neighbours)
                otherSupport = loudNeighbours(of: identity, among: witnesses, site: site, neighbours: neighbours)
            }
            // A beacon already found copied elsewhere explains the conflict by itself.
            guard support == 0, otherSupport > 0, !suspected(identity) else { continue }
            let conflict = PlaceConflict(other: identity, median: median, bound: bound, otherMedian: otherMedian, otherBound: otherBound,
                                         apart: apart, support: support, otherSupport: otherSupport)
            // The widest gap is reported, so the reason does not depend on the table's order.
            if let best = found, best.gap >= conflict.gap { continue }
            found = conflict
        }
        return found
    }
}

/// A fixed beacon the phone heard over the window, with the bound of its median.
struct HeardPlace {
    var identity: BeaconIdentity
    var position: Position3D
    var median: Double
    var bound: Double
}

/// How many of `identity`'s registered neighbours are among `heard` at least as loudly as a
/// phone at its place would hear them, by the pessimistic neighbour exponent.
private func loudNeighbours(of identity: BeaconIdentity, among heard: [HeardPlace], site: SecuritySite, neighbours: NeighbourIndex) -> Int {
    let settings = site.settings
    return (neighbours.neighbours[identity] ?? []).count { neighbour in
        guard let power = site.beacons[neighbour.identity]?.measuredPower,
              let place = heard.first(where: { $0.identity == neighbour.identity }) else { return false }
        let expected = Double(power.dBm) - 10 * settings.neighbourPathLossExponent * log10(Swift.max(1, neighbour.distance))
        return place.median >= expected
    }
}

private func medianBounds(in hearing: ReceiverHearing, since: Double, site: SecuritySite) -> [HeardPlace] {
    hearing.beacons.compactMap { identity, signal in
        guard let beacon = site.beacons[identity], let position = beacon.position,
              let median = signal.median(since: since, minimum: site.settings.placeMinimumSamples) else { return nil }
        return HeardPlace(identity: identity, position: position, median: median,
                          bound: site.medianDistanceBound(median: median, measuredPower: beacon.measuredPower))
    }
}
