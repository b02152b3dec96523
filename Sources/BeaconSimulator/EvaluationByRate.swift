import BeaconKit
import Foundation

/// The switched-off benchmark: for fixed receivers and beacons that have a region of their own,
/// exit latency after each switch-off and false exits while the beacon transmits, by the pair's
/// reception rate, beside Poisson's bound `T* = ln(3600·λ/ε)/λ` (see `EvidenceExitParameters` in BeaconKit).
///
/// Its truth is the beacon's own switch schedule, not the mean-power membership of the main
/// report: a fixed receiver at the edge of range hears a beacon the mean power calls out of
/// range, and the question here is only "is it still transmitting?".
public struct RateBandResult: Sendable, Hashable, Codable {
    /// Reception rates of the pairs in the band, packets/s: `lower ..< upper`.
    public var lower: Double
    public var upper: Double
    /// Receiver–beacon pairs whose measured rate falls in the band.
    public var pairs: Int
    /// Hours the band's beacons were transmitting, summed over its pairs.
    public var beaconHours: Double
    public var medianRate: Double
    /// Poisson's bound at the median rate for ε = 10⁻⁴ per beacon-hour.
    public var boundAtMedianRate: Double
    /// Switch-offs while the engine counted the beacon present.
    public var switchOffs: Int
    /// Switch-offs the engine never answered with an exit (it heard the beacon back first);
    /// counted as infinitely late in the latencies.
    public var missedSwitchOffs: Int
    /// Engine exit time − switch-off time, seconds.
    public var exitLatency: Distribution
    /// Each latency divided by the bound at its pair's own rate.
    public var latencyOverBound: Distribution
    /// Exits dated while the beacon was transmitting.
    public var falseExits: Int

    public var falseExitsPer10kBeaconHours: Double { beaconHours > 0 ? Double(falseExits) / beaconHours * 10_000 : .nan }
}

/// The switched-off benchmark for one exit rule.
public struct SwitchedOffResult: Sendable, Hashable, Codable {
    public var configuration: String
    public var bands: [RateBandResult]
}

extension RateBandResult {
    /// Band edges in packets/s; the first band (< 0.5) is below the benchmark's range.
    public static let edges: [Double] = [0, 0.5, 1, 2, 4, 7, .infinity]
}

/// Packets each fixed receiver hears from each beacon while it transmits.
struct RateAccumulator: Sendable {
    private let beaconByAddress: [BluetoothAddress: Int]
    private let beaconCount: Int
    private let isFixed: [Bool]
    private(set) var packets: [Int]

    init(scenario: Scenario) {
        var byAddress: [BluetoothAddress: Int] = [:]
        for (index, beacon) in scenario.beacons.enumerated() { byAddress[beacon.address] = index }
        beaconByAddress = byAddress
        beaconCount = scenario.beacons.count
        isFixed = scenario.receivers.map { if case .fixed = $0.placement { true } else { false } }
        packets = Array(repeating: 0, count: isFixed.contains(true) ? scenario.receivers.count * beaconCount : 0)
    }

    mutating func add(_ sighting: Sighting, receiver: Int) {
        guard !packets.isEmpty, isFixed[receiver], let beacon = beaconByAddress[sighting.address] else { return }
        packets[receiver * beaconCount + beacon] += 1
    }

    /// The benchmark for one configuration's enters and exits.
    func result(configuration: String, scenario: Scenario, schedule: [[Range<Double>]],
                events: [TransitionKey: [Double]], epsilon: Double = 1e-4) -> SwitchedOffResult {
        // Regions of exactly one beacon (one transmitter of one identity).
        var regionOfBeacon: [Int: Int] = [:]
        for (regionIndex, region) in scenario.regions.enumerated() where region.major != nil && region.minor != nil {
            let members = scenario.beacons.indices.filter { region.matches(scenario.beacons[$0].identity) }
            if members.count == 1, regionOfBeacon[members[0]] == nil { regionOfBeacon[members[0]] = regionIndex }
        }
        let bandCount = RateBandResult.edges.count - 1
        var rates = Array(repeating: [Double](), count: bandCount)
        var hours = Array(repeating: 0.0, count: bandCount)
        var latencies = Array(repeating: [Double](), count: bandCount)
        var ratios = Array(repeating: [Double](), count: bandCount)
        var switchOffs = Array(repeating: 0, count: bandCount)
        var missed = Array(repeating: 0, count: bandCount)
        var falseExits = Array(repeating: 0, count: bandCount)
        for receiver in scenario.receivers.indices where isFixed[receiver] && !packets.isEmpty {
            for (beacon, region) in regionOfBeacon {
                let off = schedule[beacon]
                let onTime = scenario.duration - off.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
                guard onTime > 0 else { continue }
                let rate = Double(packets[receiver * beaconCount + beacon]) / onTime
                guard rate > 0 else { continue }
                let band = RateBandResult.edges.indices.dropLast().last { RateBandResult.edges[$0] <= rate } ?? 0
                rates[band].append(rate)
                hours[band] += onTime / 3600
                let bound = EvidenceExitParameters.poissonBound(rate: rate, falseExitsPerHour: epsilon)
                let enters = events[TransitionKey(receiver: receiver, region: region, entering: true)] ?? []
                let exits = events[TransitionKey(receiver: receiver, region: region, entering: false)] ?? []
                // An exit answers the latest switch-off before it unless the engine entered again
                // in between (it heard the beacon back); otherwise it was dated while the beacon
                // transmitted, and is false.
                var answered = Set<Int>()
                for exit in exits {
                    let period = off.lastIndex { $0.lowerBound <= exit }
                    if let period, !answered.contains(period),
                       !enters.contains(where: { $0 > off[period].lowerBound && $0 < exit }) {
                        answered.insert(period)
                        latencies[band].append(exit - off[period].lowerBound)
                        ratios[band].append((exit - off[period].lowerBound) / bound)
                    } else if !(period.map { off[$0].contains(exit) } ?? false) {
                        falseExits[band] += 1
                    }
                }
                // Switch-offs that found the beacon present: the last event before it was an enter.
                for (index, period) in off.enumerated() {
                    let lastEnter = enters.last { $0 <= period.lowerBound } ?? -.infinity
                    let lastExit = exits.last { $0 <= period.lowerBound } ?? -.infinity
                    guard lastEnter > lastExit else { continue }
                    switchOffs[band] += 1
                    if !answered.contains(index) {
                        missed[band] += 1
                        latencies[band].append(.infinity)
                        ratios[band].append(.infinity)
                    }
                }
            }
        }
        let bands = (0..<bandCount).map { band -> RateBandResult in
            let median = Distribution.percentile(rates[band].sorted(), 0.5)
            return RateBandResult(lower: RateBandResult.edges[band], upper: RateBandResult.edges[band + 1], pairs: rates[band].count,
                                  beaconHours: hours[band], medianRate: median,
                                  boundAtMedianRate: EvidenceExitParameters.poissonBound(rate: median, falseExitsPerHour: epsilon),
                                  switchOffs: switchOffs[band], missedSwitchOffs: missed[band],
                                  exitLatency: Distribution(latencies[band]), latencyOverBound: Distribution(ratios[band]),
                                  falseExits: falseExits[band])
        }
        return SwitchedOffResult(configuration: configuration, bands: bands)
    }
}

extension EvaluationReport {
    /// The switched-off benchmark as text, one table per exit rule.
    var switchedOffText: [String] {
        guard let results = switchedOff, !results.isEmpty else { return [] }
        var lines = ["", "Switched off, fixed receivers by reception rate (latency = exit − switch-off, s; T* = ln(3600·λ/ε)/λ at the band's median λ, ε = 1e-4 per beacon-hour)"]
        let widths = [50, 10, 6, 11, 7, 7, 8, 6, 7, 7, 7, 9, 7, 8, 13]
        lines.append(rowText(["configuration", "pkt/s", "pairs", "beacon-h", "λ p50", "T*", "1.2 T*", "offs", "p50", "p95", "max",
                              "p95/T*", "missed", "false", "false/10^4 bh"], widths: widths))
        for result in results {
            for band in result.bands where band.pairs > 0 {
                let range = band.upper.isFinite ? "\(format(band.lower, 1))–\(format(band.upper, 1))" : "≥\(format(band.lower, 1))"
                lines.append(rowText([result.configuration, range, "\(band.pairs)", format(band.beaconHours, 0), format(band.medianRate, 2),
                                      format(band.boundAtMedianRate, 1), format(1.2 * band.boundAtMedianRate, 1), "\(band.switchOffs)",
                                      format(band.exitLatency.p50, 1), format(band.exitLatency.p95, 1), format(band.exitLatency.max, 1),
                                      format(band.latencyOverBound.p95, 2), "\(band.missedSwitchOffs)", "\(band.falseExits)",
                                      format(band.falseExitsPer10kBeaconHours, 2)], widths: widths))
            }
        }
        return lines
    }
}

func rowText(_ cells: [String], widths: [Int]) -> String {
    zip(cells, widths).enumerated().map { index, pair in
        let (cell, width) = pair
        let padding = String(repeating: " ", count: max(0, width - cell.count))
        return index == 0 ? cell + padding : padding + cell
    }.joined(separator: " ").trimmingCharacters(in: .whitespaces)
}
