import BeaconLocate

/// What one cycle tells a room filter about each room.
enum RoomEvidence: Sendable, Hashable {
    /// A method's fix, blurred by the variant's spread (``RoomLikelihood``).
    case fix(LocateMethod)
    /// The particle filter's share of weight in each room (``ParticleFilter/mass(in:)``).
    case particleMass
    /// The readings' likelihood per room under the calibrated signal model, no fix
    /// (``SignalRoomLikelihood``), raised to the variant's temperature.
    case signal
}

/// A room filter configuration the location evaluation runs: the evidence that feeds it (the
/// product over those available that cycle), the spread of fix likelihoods, the signal model's
/// temperature, and the filter's rates and threshold.
struct RoomFilterVariant: Sendable, Hashable {
    var label: String
    var evidence: [RoomEvidence]
    var spread: Double = 0.5
    var temperature: Double = 0.5
    /// Share of the particle mass likelihood spread evenly over the rooms, so that a cloud wholly
    /// in one room does not rule the others out.
    var massOutlierShare: Double = 0.05
    var configuration: RoomFilter.Configuration

    var methods: [LocateMethod] { evidence.compactMap { if case .fix(let method) = $0 { method } else { nil } } }

    /// The default before issue 10's second round: the particle filter's, fingerprint's and
    /// trilateration's fixes, 0.5 m spread, belief 0.93 to announce a room; chosen from a grid on
    /// examples/office.json (docs/evaluation.md). Kept as a comparison row.
    static let fixes = RoomFilterVariant(label: "room filter on fixes (default before)", evidence: [.fix(.particle), .fix(.fingerprint), .fix(.trilateration)],
                                         configuration: .init(switchRate: 0.5, threshold: 0.93))

    static let particleMass = RoomFilterVariant(label: "room filter on particle mass", evidence: [.particleMass],
                                                configuration: .init(switchRate: 0.5, threshold: 0.93))

    static let signal = RoomFilterVariant(label: "room filter on signal model", evidence: [.signal],
                                          configuration: .init(switchRate: 0.5, threshold: 0.93))

    static let standard: RoomFilterVariant = {
        var variant = fixes
        variant.label = LocationReport.defaultRoomDecider
        return variant
    }()

    /// The default and the designs compared with it.
    static let evaluated: [RoomFilterVariant] = {
        var rows = [standard, fixes, particleMass]
        var hot = signal
        hot.label += ", temperature 1"
        hot.temperature = 1
        rows.append(hot)
        for (temperature, threshold) in [(1.0, 0.8), (1.0, 0.9), (1.0, 0.93), (1.0, 0.97), (1.0, 0.99), (0.5, 0.8), (0.5, 0.97), (2.0, 0.97)] {
            var combined = signal
            combined.label = "signal T\(temperature) + fixes, threshold \(threshold)"
            combined.evidence = [.signal, .fix(.particle), .fix(.fingerprint), .fix(.trilateration)]
            combined.temperature = temperature
            combined.configuration.threshold = threshold
            rows.append(combined)
        }
        for threshold in [0.8, 0.97] {
            var stricter = fixes
            stricter.label = "fixes, threshold \(threshold)"
            stricter.configuration.threshold = threshold
            rows.append(stricter)
        }
        var massSignal = signal
        massSignal.label = "signal T1.0 + particle mass"
        massSignal.evidence = [.signal, .particleMass]
        massSignal.temperature = 1
        rows.append(massSignal)
        var fingerprint = signal
        fingerprint.label = "signal T1.0 + fingerprint fix"
        fingerprint.evidence = [.signal, .fix(.fingerprint)]
        fingerprint.temperature = 1
        rows.append(fingerprint)
        var slow = hot
        slow.label += ", rate 0.2"
        slow.configuration.switchRate = 0.2
        rows.append(slow)
        return rows
    }()
}
