import BeaconKit
import BeaconRotation

/// Spoof and replay checks on one site's sighting stream (docs/security.md, "Spoof and replay
/// detection"). A pure state machine: give it each sighting with the server's arrival time and
/// it returns the alerts that sighting raised. Its state is bounded by the site's capacities,
/// and the work per sighting does not grow with history.
public struct SecurityDetector: Sendable {
    public private(set) var site: SecuritySite
    private var settings: SecuritySettings { site.settings }
    private var clocks: BoundedTable<String, ReceiverClock>
    private var identities: BoundedTable<BeaconIdentity, IdentityTrace>
    private var signalPairs: BoundedTable<SignalPair, SignalBaseline>
    private var raised: BoundedTable<RaiseKey, Double>
    private var hearings: BoundedTable<String, ReceiverHearing>
    private var neighbours: NeighbourIndex
    /// The rotating beacons' identities around `latest`, rebuilt at each period boundary.
    private var rotationIndex: RotationIndex<BeaconIdentity>?
    private var latest = -Double.infinity

    public init(site: SecuritySite) {
        self.site = site
        clocks = BoundedTable(capacity: site.settings.receiverCapacity)
        identities = BoundedTable(capacity: site.settings.identityCapacity)
        signalPairs = BoundedTable(capacity: site.settings.pairCapacity)
        raised = BoundedTable(capacity: site.settings.identityCapacity + site.settings.receiverCapacity)
        hearings = BoundedTable(capacity: site.settings.receiverCapacity)
        neighbours = NeighbourIndex(site: site)
    }

    /// Takes a changed registry (beacons, gateways, positions) and keeps what was learnt:
    /// clocks, traces, RSSI baselines and raised alerts. The capacities stay those of `init`.
    public mutating func update(site: SecuritySite) {
        guard site != self.site else { return }
        self.site = site
        neighbours = NeighbourIndex(site: site)
        rotationIndex = nil
    }

    /// How many identities, receivers, beacon–gateway pairs, raised alerts and phones the
    /// detector currently remembers.
    public var trackedCounts: (identities: Int, receivers: Int, pairs: Int, raised: Int, phones: Int) {
        (identities.count, clocks.count, signalPairs.count, raised.count, hearings.count)
    }

    /// The registered neighbours of a fixed beacon, nearest first (for tests and explanations).
    public func neighbourNames(of identity: BeaconIdentity) -> [String] {
        neighbours.neighbours[identity]?.map(\.name) ?? []
    }

    /// Checks one sighting; the alerts it raises are appended to `alerts`.
    public mutating func receive(_ heard: SecurityObservation, into alerts: inout [SecurityAlert]) {
        checkClock(heard, into: &alerts)
        guard let observation = resolveRotation(heard, into: &alerts) else { return }
        let registered = site.beacons[observation.identity]
        if let registered { checkAddress(observation, registered: registered, into: &alerts) }
        guard let receiverPosition = site.receivers[observation.receiver] else {
            if let registered, registered.position != nil { checkNeighbours(observation, beacon: registered, into: &alerts) }
            return
        }
        let power = registered?.measuredPower ?? observation.advertisedPower ?? .appleDefault
        guard let bound = site.distanceBound(rssi: observation.rssi, measuredPower: power) else { return }
        if let registered, let beaconPosition = registered.position {
            checkCoverage(observation, beacon: registered, at: beaconPosition, receiverPosition: receiverPosition, bound: bound, into: &alerts)
            checkSignal(observation, beacon: registered, into: &alerts)
        } else {
            checkTrace(observation, name: registered?.name, receiverPosition: receiverPosition, bound: bound, into: &alerts)
        }
    }

    /// Convenience for one sighting: the alerts it raised.
    public mutating func receive(_ observation: SecurityObservation) -> [SecurityAlert] {
        var alerts: [SecurityAlert] = []
        receive(observation, into: &alerts)
        return alerts
    }

    // MARK: - Trusted time

    private mutating func checkClock(_ observation: SecurityObservation, into alerts: inout [SecurityAlert]) {
        let settings = self.settings
        let offset = observation.serverTime - observation.receiverTime
        let verdict = clocks.withValue(for: observation.receiver, at: observation.serverTime, make: ReceiverClock.init) { clock in
            clock.judge(offset: offset, at: observation.serverTime, settings: settings)
        }
        guard let verdict else { return }
        let receiver = observation.receiver
        switch verdict {
        case .leads(let seconds):
            raise(.clockSkew, identity: nil, receivers: [receiver], time: observation.serverTime, into: &alerts,
                  reason: "\(receiver)'s timestamps lead the server's clock by \(format(seconds)) s (at most \(format(settings.clockLeadTolerance)) s is allowed): its clock is wrong or was set ahead")
        case .stale(let seconds):
            raise(.staleSightings, identity: nil, receivers: [receiver], time: observation.serverTime, into: &alerts,
                  reason: "\(receiver) sent sightings stamped \(format(seconds)) s before they arrived (at most \(format(settings.maximumSightingAge)) s is allowed): held back, replayed, or its clock runs behind")
        case .wandered(let from, let to):
            raise(.clockSkew, identity: nil, receivers: [receiver], time: observation.serverTime, into: &alerts,
                  reason: "\(receiver)'s clock moved from \(format(from)) s to \(format(to)) s behind the server's (at most \(format(settings.clockJumpTolerance)) s of change is allowed): it jumped or drifts")
        }
    }

    // MARK: - Rotating identities

    /// The observation with a rotating beacon's identity replaced by its registered one; nil
    /// (after raising an alert) when the identity belongs to a period no longer accepted.
    private mutating func resolveRotation(_ observation: SecurityObservation, into alerts: inout [SecurityAlert]) -> SecurityObservation? {
        guard !site.rotations.isEmpty else { return observation }
        latest = Swift.max(latest, observation.serverTime)
        if rotationIndex.map({ latest >= $0.validUntil }) ?? true {
            rotationIndex = RotationIndex(site.rotations.map { (id: $0.key, identity: $0.value) }, at: latest)
        }
        guard let match = rotationIndex?.match(observation.identity, at: observation.serverTime) else { return observation }
        var resolved = observation
        resolved.identity = match.beacon
        if match.verdict.resolves { return resolved }
        let name = site.beacons[match.beacon]?.name ?? short(match.beacon)
        let when: String
        switch match.verdict {
        case .replay(let periodsAgo): when = "\(periodsAgo) period\(periodsAgo == 1 ? "" : "s") old"
        case .future(let periodsAhead): when = "\(periodsAhead) periods ahead"
        case .current, .next, .previousWithinGrace: when = "current"
        }
        let period = site.rotations[match.beacon].map { " (periods of \($0.period))" } ?? ""
        raise(.replayedIdentity, identity: match.beacon, receivers: [observation.receiver], time: observation.serverTime, into: &alerts,
              reason: "rotated identity \(observation.identity.major).\(observation.identity.minor) of beacon \(name) heard by \(observation.receiver) is from period \(match.period), \(when)\(period): a recording played back")
        return nil
    }

    // MARK: - Address consistency

    private mutating func checkAddress(_ observation: SecurityObservation, registered: SecuritySite.Beacon,
                                       into alerts: inout [SecurityAlert]) {
        guard let address = observation.address else { return }
        let expected = identities.withValue(for: observation.identity, at: observation.serverTime, make: IdentityTrace.init) { trace in
            if trace.firstAddress == nil { trace.firstAddress = registered.address ?? address }
            return trace.firstAddress
        }
        guard let expected, expected != address else { return }
        raise(.secondAddress, identity: observation.identity, receivers: [observation.receiver], time: observation.serverTime, into: &alerts,
              reason: "beacon \(registered.name) (\(short(observation.identity))) heard by \(observation.receiver) from address \(address), but it transmits from \(expected): a second transmitter uses its identity")
    }

    // MARK: - Cross-reference with the site's positions

    private mutating func checkCoverage(_ observation: SecurityObservation, beacon: SecuritySite.Beacon, at beaconPosition: Position3D,
                                        receiverPosition: Position3D, bound: Double, into alerts: inout [SecurityAlert]) {
        let distance = beaconPosition.distance(to: receiverPosition)
        guard distance > bound else { return }
        let settings = self.settings
        let alert = identities.withValue(for: observation.identity, at: observation.serverTime, make: IdentityTrace.init) { trace in
            trace.strikes.strike(at: observation.serverTime, limit: settings.strikesToAlert, window: settings.strikeWindow)
        }
        guard alert else { return }
        let rssi = observation.rssi.map { "\($0) dBm" } ?? "?"
        raise(.outOfCoverage, identity: observation.identity, receivers: [observation.receiver], time: observation.serverTime, into: &alerts,
              reason: "fixed beacon \(beacon.name) at \(beaconPosition) heard by \(observation.receiver) at \(rssi), so within \(format(bound)) m of it, but \(observation.receiver) is \(format(distance)) m away (\(settings.strikesToAlert) such sightings within \(format(settings.strikeWindow)) s): a copy is transmitting near \(observation.receiver)")
    }

    // MARK: - Cross-reference with what else a phone hears

    /// Two checks on a phone (a receiver the site does not place) hearing a fixed beacon:
    /// - neighbours: it hears the beacon as if it stood at it, yet heard none of the beacon's
    ///   registered neighbours for `neighbourWindow` seconds;
    /// - place: it hears the beacon and another fixed beacon, over the same few seconds, louder
    ///   than a phone at any one place could hear both (their distance bounds and a walk do not
    ///   reach across the distance between them). One of the two is then a copy; the one fewer of
    ///   the other beacons heard agree with is named.
    private mutating func checkNeighbours(_ observation: SecurityObservation, beacon: SecuritySite.Beacon, into alerts: inout [SecurityAlert]) {
        let settings = self.settings
        let site = self.site
        let index = self.neighbours
        let time = observation.serverTime
        let around = index.neighbours[observation.identity] ?? []
        let claims = observation.rssi.map { Double($0) >= Double(beacon.measuredPower.dBm) - settings.neighbourClaimMargin } ?? false
        let raised = self.raised
        let holdoff = settings.alertHoldoff
        let suspected = { (identity: BeaconIdentity) -> Bool in
            SecurityAlert.Kind.copyKinds.contains { kind in
                raised.value(for: RaiseKey(kind: kind, identity: identity, receiver: nil)).map { time - $0 <= 2 * holdoff } ?? false
            }
        }
        let (strike, place) = hearings.withValue(for: observation.receiver, at: time, make: { ReceiverHearing(at: time) }) { hearing -> (Bool, PlaceConflict?) in
            let signal = hearing.heard(observation.identity, rssi: observation.rssi, at: time, receiverTime: observation.receiverTime,
                                       gap: settings.neighbourWindow / 3)
            var place: PlaceConflict?
            if let conflict = PlaceConflict.find(for: observation, signal: signal, in: hearing, site: site, neighbours: index,
                                                     suspected: suspected),
               hearing.placeStrike(against: observation.identity, at: time, limit: settings.strikesToAlert, window: settings.strikeWindow) {
                place = conflict
            }
            guard claims, around.count >= settings.minimumNeighbours, time - hearing.listeningSince >= settings.neighbourWindow,
                  !hearing.heardAny(of: around, since: time - settings.neighbourWindow) else { return (false, place) }
            return (hearing.strikes.strike(at: time, limit: settings.strikesToAlert, window: settings.strikeWindow), place)
        }
        if let place {
            let other = site.beacons[place.other]?.name ?? short(place.other)
            raise(.outOfCoverage, identity: observation.identity, receivers: [observation.receiver], time: time, into: &alerts,
                  reason: "\(observation.receiver) hears fixed beacon \(beacon.name) at a median \(format(place.median)) dBm (so within \(format(place.bound)) m of it) and fixed beacon \(other) at \(format(place.otherMedian)) dBm (within \(format(place.otherBound)) m) in the same \(format(settings.placeWindow)) s, but they are \(format(place.apart)) m apart; \(place.support) of the other beacons it hears agree with \(beacon.name)'s place and not \(other)'s, \(place.otherSupport) the other way (\(settings.strikesToAlert) such sightings within \(format(settings.strikeWindow)) s): a copy of \(beacon.name) is transmitting near \(observation.receiver)")
        }
        guard strike else { return }
        let rssi = observation.rssi.map { "\($0) dBm" } ?? "?"
        let names = around.map { "\($0.name) (\(format($0.distance)) m)" }.joined(separator: ", ")
        raise(.absentNeighbours, identity: observation.identity, receivers: [observation.receiver], time: time, into: &alerts,
              reason: "\(observation.receiver) hears fixed beacon \(beacon.name) (\(short(observation.identity))) at \(rssi), as if beside it, but heard none of the \(around.count) beacons around it in the last \(format(settings.neighbourWindow)) s: \(names): a copy of \(beacon.name) is transmitting near \(observation.receiver)")
    }

    // MARK: - Impossible traces

    private mutating func checkTrace(_ observation: SecurityObservation, name: String?, receiverPosition: Position3D, bound: Double,
                                     into alerts: inout [SecurityAlert]) {
        let settings = self.settings
        let anchor = TraceAnchor(receiver: observation.receiver, position: receiverPosition, time: observation.serverTime, bound: bound)
        let conflict = identities.withValue(for: observation.identity, at: observation.serverTime, make: IdentityTrace.init) { trace in
            trace.add(anchor, settings: settings)
        }
        guard let conflict else { return }
        let label = name.map { "beacon \($0) (\(short(observation.identity)))" } ?? "identity \(short(observation.identity))"
        raise(.impossibleTrace, identity: observation.identity, receivers: [conflict.earlier.receiver, observation.receiver],
              time: observation.serverTime, into: &alerts,
              reason: "\(label) heard by \(conflict.earlier.receiver) at \(conflict.earlier.position) and \(format(conflict.elapsed)) s later by \(observation.receiver) at \(receiverPosition): its sightings put it at least \(format(conflict.gap)) m apart, farther than a walk at \(format(settings.walkingSpeed)) m/s allows: two transmitters share the identity")
    }

    // MARK: - RSSI consistency

    private mutating func checkSignal(_ observation: SecurityObservation, beacon: SecuritySite.Beacon, into alerts: inout [SecurityAlert]) {
        guard let rssi = observation.rssi else { return }
        let settings = self.settings
        let key = SignalPair(identity: observation.identity, receiver: observation.receiver)
        let shift = signalPairs.withValue(for: key, at: observation.serverTime, make: SignalBaseline.init) { baseline in
            baseline.add(Double(rssi), settings: settings)
        }
        guard let shift else { return }
        raise(.rssiShift, identity: observation.identity, receivers: [observation.receiver], time: observation.serverTime, into: &alerts,
              reason: "fixed beacon \(beacon.name) at \(observation.receiver): recent RSSI averages \(format(shift.recent)) dBm against \(format(shift.long)) dBm over the long run, \(format(shift.recent - shift.long)) dB louder (at most \(format(settings.rssiShiftThreshold)) dB is allowed): a second transmitter nearby, or the beacon was moved closer")
    }

    // MARK: - Raising

    private mutating func raise(_ kind: SecurityAlert.Kind, identity: BeaconIdentity?, receivers: [String], time: Double,
                                into alerts: inout [SecurityAlert], reason: String) {
        let key = RaiseKey(kind: kind, identity: identity, receiver: identity == nil ? receivers.first : nil)
        let holdoff = settings.alertHoldoff
        let due = raised.withValue(for: key, at: time, make: { -Double.infinity }) { last in
            guard time - last >= holdoff else { return false }
            last = time
            return true
        }
        if due { alerts.append(SecurityAlert(kind: kind, identity: identity, receivers: receivers, reason: reason, time: time)) }
    }
}

private struct SignalPair: Hashable, Sendable {
    var identity: BeaconIdentity
    var receiver: String
}

extension SecurityAlert.Kind {
    /// Alerts that name an identity as transmitted by a second, forged transmitter.
    static let copyKinds: [SecurityAlert.Kind] = [.outOfCoverage, .rssiShift, .secondAddress, .impossibleTrace, .absentNeighbours]
}

private struct RaiseKey: Hashable, Sendable {
    var kind: SecurityAlert.Kind
    var identity: BeaconIdentity?
    var receiver: String?
}

/// One decimal, none when whole. Values come from outside (a receiver's timestamps), so a
/// whole value beyond Int's range is written as a Double rather than trapping in Int(_:).
func format(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return Int(exactly: rounded).map { String($0) } ?? String(rounded)
}

func short(_ identity: BeaconIdentity) -> String {
    "\(identity.uuid.uuidString.prefix(8))… \(identity.major).\(identity.minor)"
}
