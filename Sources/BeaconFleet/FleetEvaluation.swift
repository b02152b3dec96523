import BeaconKit
import Foundation

extension FleetMonitor {
    /// The silence after which a beacon heard `rate` times a second is missing: the shortest
    /// delay with `falseMissingPerHour` false alerts if reception were Poisson, `ln(3600·λ/ε)/λ`,
    /// times the safety factor, and never below the minimum.
    public func silenceThreshold(rate: Double) -> Double {
        guard rate > 0 else { return .infinity }
        let poisson = log(max(3600 * rate / settings.falseMissingPerHour, M_E)) / rate
        return max(settings.minimumSilence, settings.silenceSafetyFactor * poisson)
    }

    /// Runs the time-based checks and returns every finding whose level changed.
    public mutating func evaluate(now: Double) -> [FleetTransition] {
        var transitions: [FleetTransition] = []
        for index in watches.indices {
            var watch = watches[index]
            var found: [FleetCheck: (HealthLevel, String)] = [:]
            judgeMissing(watch, now: now, into: &found)
            judgePlace(watch, now: now, into: &found)
            judgeClone(&watch, now: now, into: &found)
            judgeBattery(watch, now: now, into: &found)
            judgeDrift(watch, now: now, into: &found)
            if watch.badTelemetry.holds(now: now, needed: 1, hold: settings.evidenceHold) {
                found[.telemetry] = (.warning, watch.badTelemetry.detail)
            }
            Self.apply(found, to: &watch.findings, subject: .beacon(watch.beacon.identity), now: now,
                       transitions: &transitions)
            watches[index] = watch
        }
        judgeUnregistered(now: now, transitions: &transitions)
        return transitions
    }

    static func apply(_ found: [FleetCheck: (HealthLevel, String)], to findings: inout [FleetCheck: FleetFinding],
                      subject: FleetSubject, now: Double, transitions: inout [FleetTransition]) {
        for check in FleetCheck.allCases {
            let old = findings[check]
            let (level, reason) = found[check] ?? (.ok, old.map { "cleared: \($0.reason)" } ?? "")
            let oldLevel = old?.level ?? .ok
            if level == oldLevel {
                if level != .ok { findings[check]?.reason = reason }
                continue
            }
            transitions.append(FleetTransition(subject: subject, check: check, from: oldLevel, to: level,
                                               reason: reason, time: now))
            findings[check] = level == .ok ? nil : FleetFinding(check: check, level: level, reason: reason, since: now)
        }
    }

    private func gatewayNames(_ links: [LinkWatch]) -> String {
        links.map { gateways[$0.gateway].gateway.name }.sorted().joined(separator: ", ")
    }

    func judgeMissing(_ watch: BeaconWatch, now: Double, into found: inout [FleetCheck: (HealthLevel, String)]) {
        guard watch.beacon.isDeployed else { return }
        let expected = watch.links.filter {
            gateways[$0.gateway].gateway.isFixed && $0.isExpected(now: now, settings: settings)
        }
        guard !expected.isEmpty else {
            found[.missing] = (.unknown, watch.lastHeard == nil
                ? "not heard by any gateway yet"
                : "learning which gateways hear it (\(watch.links.count) so far)")
            return
        }
        let up = expected.filter { gateways[$0.gateway].isUp(now: now, timeout: settings.gatewayTimeout) }
        guard !up.isEmpty else {
            found[.missing] = (.unknown, "the gateways that hear it are offline: \(gatewayNames(expected))")
            return
        }
        let rate = up.reduce(0) { $0 + $1.rate.perSecond }
        let threshold = silenceThreshold(rate: rate)
        var start = watch.lastHeard ?? now
        var listenedUntil = start
        for link in up {
            let gateway = gateways[link.gateway]
            start = max(start, gateway.upSince ?? start)
            listenedUntil = max(listenedUntil, gateway.lastReport ?? listenedUntil)
        }
        // Silence counts only while a gateway that should hear the beacon proves, by reporting,
        // that it was listening: a gateway that just died has not reported yet, and its silence
        // must not be taken for the beacon's.
        let silence = min(now, listenedUntil) - start
        if silence >= threshold {
            found[.missing] = (.alert, "not heard for \(Self.seconds(silence)) by \(gatewayNames(up)), which hear it "
                + "\(Self.rate(rate)); missing after \(Self.seconds(threshold))")
        }
    }

    func judgePlace(_ watch: BeaconWatch, now: Double, into found: inout [FleetCheck: (HealthLevel, String)]) {
        if watch.outOfPlace.holds(now: now, needed: settings.evidencePackets, hold: settings.evidenceHold) {
            found[.outOfPlace] = (watch.outOfPlaceIsForeignSite ? .alert : .warning, watch.outOfPlace.detail)
        } else if !watch.beacon.isDeployed, watch.beacon.isFixed == true, let heard = watch.lastHeard,
                  now - heard <= settings.evidenceHold, watch.links.contains(where: { $0.rate.packets >= settings.evidencePackets }) {
            found[.outOfPlace] = (.warning, "registered as not deployed, but transmitting")
        }
    }

    func judgeClone(_ watch: inout BeaconWatch, now: Double, into found: inout [FleetCheck: (HealthLevel, String)]) {
        let needed = settings.evidencePackets
        let hold = settings.evidenceHold
        if watch.interleavedAddresses.holds(now: now, needed: needed, hold: hold) {
            found[.clone] = (.alert, watch.interleavedAddresses.detail)
        } else if watch.twoPlaces.holds(now: now, needed: needed, hold: hold) {
            found[.clone] = (.alert, watch.twoPlaces.detail)
        } else if watch.powerFlips.holds(now: now, needed: needed, hold: hold) {
            found[.clone] = (.alert, watch.powerFlips.detail + ": two transmitters")
        } else if watch.powerMismatch.holds(now: now, needed: 10, hold: hold) {
            found[.clone] = (.warning, watch.powerMismatch.detail)
        } else if let changed = intervalChange(&watch.interval, now: now) {
            found[.clone] = (.warning, changed)
        }
    }

    private func intervalChange(_ interval: inout IntervalWatch, now: Double) -> String? {
        if let window = interval.closeWindow(now: now), let baseline = interval.baseline {
            let ratio = window / baseline
            interval.changedWindows = (ratio < 0.6 || ratio > 1.6) ? interval.changedWindows + 1 : 0
        }
        if let pair = interval.ratioToBaseline {
            let ratio = pair.latest / pair.baseline
            let changedByTelemetry = interval.telemetryInterval != nil && (ratio < 0.7 || ratio > 1.43)
            if changedByTelemetry || interval.changedWindows >= 2 {
                return "advertising interval changed from \(Self.milliseconds(pair.baseline)) to \(Self.milliseconds(pair.latest))"
            }
        }
        return nil
    }

    func judgeBattery(_ watch: BeaconWatch, now: Double, into found: inout [FleetCheck: (HealthLevel, String)]) {
        let type = BatteryType.named(watch.beacon.battery)
        if let latest = watch.battery.latestMillivolts {
            let volts = String(format: "%.2f V", Double(latest) / 1000)
            if Double(latest) <= type.cutoffMillivolts + 50 {
                found[.battery] = (.alert, "\(volts), at the \(type.name) cutoff")
                return
            }
            guard let days = watch.battery.daysLeft(cutoff: type.cutoffMillivolts),
                  let line = watch.battery.fit(windowHours: 72) ?? watch.battery.fit() else { return }
            let trend = "\(volts), falling \(String(format: "%.1f", -line.perDay)) mV a day: about \(Int(days.rounded())) days left"
            if days < settings.batteryAlertDays {
                found[.battery] = (.alert, trend)
            } else if days < settings.batteryWarningDays {
                found[.battery] = (.warning, trend)
            }
            return
        }
        guard watch.beacon.isDeployed, let installed = watch.beacon.installedAt, type.ratedLifeDays.isFinite else { return }
        let age = (now - installed) / 86_400
        if age >= 0.9 * type.ratedLifeDays {
            found[.battery] = (.warning, "installed \(Int(age)) days ago; a \(type.name) lasts about \(Int(type.ratedLifeDays)) days")
        }
    }

    func judgeDrift(_ watch: BeaconWatch, now: Double, into found: inout [FleetCheck: (HealthLevel, String)]) {
        guard watch.beacon.isFixed else { return }
        var worst: (dB: Double, text: String)?
        for link in watch.links where gateways[link.gateway].gateway.isFixed {
            guard let shift = link.drift.shift, let normal = link.drift.normalLevel else { continue }
            if worst == nil || abs(shift.dB) > abs(worst!.dB) {
                let gateway = gateways[link.gateway].gateway.name
                let text = "RSSI at \(gateway) moved from \(Int(normal.rounded())) to "
                    + "\(Int((normal + shift.dB).rounded())) dBm since \(TimeDisplay.string(shift.since))"
                worst = (shift.dB, text)
            }
        }
        if let worst {
            found[.drift] = (abs(worst.dB) >= settings.driftShift ? .alert : .warning, worst.text)
            return
        }
        for link in watch.links where gateways[link.gateway].gateway.isFixed {
            guard let fall = link.drift.reception.fall else { continue }
            let gateway = gateways[link.gateway].gateway.name
            found[.drift] = (.warning, "\(gateway) hears it \(Int(fall.recent.rounded())) times a minute, normally "
                + "\(Int(fall.normal.rounded())), since \(TimeDisplay.string(fall.since)): moved or obstructed")
            return
        }
    }

    mutating func judgeUnregistered(now: Double, transitions: inout [FleetTransition]) {
        unregistered.expire(now: now, settings: settings)
        var nowFound: [BeaconIdentity: FleetFinding] = [:]
        for (identity, entry) in unregistered.entries {
            let place = entry.nearestGateway.map { " strongest at \($0.name) (\($0.rssi) dBm)" } ?? ""
            let reason = "not in the registry; heard \(entry.packets) times by \(entry.strongestByGateway.count) gateways,\(place)"
            if var old = unregisteredFindings[identity] {
                old.reason = reason
                nowFound[identity] = old
            } else {
                nowFound[identity] = FleetFinding(check: .unregistered, level: .warning, reason: reason, since: now)
                transitions.append(FleetTransition(subject: .beacon(identity), check: .unregistered, from: .ok,
                                                   to: .warning, reason: reason, time: now))
            }
        }
        for (identity, old) in unregisteredFindings where nowFound[identity] == nil {
            transitions.append(FleetTransition(subject: .beacon(identity), check: .unregistered, from: old.level,
                                               to: .ok, reason: "not heard for \(Self.seconds(settings.unregisteredMemory))",
                                               time: now))
        }
        unregisteredFindings = nowFound
        for (gateway, window) in unregistered.floods {
            var found: [FleetCheck: (HealthLevel, String)] = [:]
            if window.activeSince != nil {
                found[.identityFlood] = (.alert, "\(window.uncounted + window.newIdentities) unknown identities "
                    + "under the organisation's UUIDs near \(gateway) (strongest \(window.strongest) dBm): "
                    + "a device sending random identities; they are counted, not stored")
            }
            var findings = gatewayFindings[gateway] ?? [:]
            Self.apply(found, to: &findings, subject: .gateway(gateway), now: now, transitions: &transitions)
            gatewayFindings[gateway] = findings.isEmpty ? nil : findings
        }
        for (gateway, findings) in gatewayFindings where unregistered.floods[gateway] == nil {
            var cleared = findings
            Self.apply([:], to: &cleared, subject: .gateway(gateway), now: now, transitions: &transitions)
            gatewayFindings[gateway] = nil
        }
    }

    static func seconds(_ value: Double) -> String {
        value < 120 ? "\(Int(value.rounded())) s" : value < 7200 ? "\(Int((value / 60).rounded())) min"
            : "\(Int((value / 3600).rounded())) h"
    }

    static func rate(_ perSecond: Double) -> String {
        perSecond >= 1 ? String(format: "%.1f times a second", perSecond)
            : String(format: "%.1f times a minute", perSecond * 60)
    }

    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
}
