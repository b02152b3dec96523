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
    /// Share of a fix's own uncertainty that widens its spread (``RoomDecider/Configuration/uncertaintySpread``).
    var uncertaintySpread: Double?
    var temperature: Double = 1
    /// Cauchy scale (dB) of signal-model readings weaker than predicted; nil: symmetric.
    var weakerLossScale: Double?
    /// The user's body in the signal model and the particle filter (``BodyShadow``); nil: none.
    var body: BodyShadow?
    /// Share of the particle mass likelihood spread evenly over the rooms.
    var massOutlierShare: Double = 0.05
    /// Whether the particle filter whose mass this variant weighs has the fingerprint fix
    /// weigh its particles (``RoomDecider/Configuration/fingerprintsWeighParticles``).
    var fingerprintsWeighParticles = true
    var configuration: RoomFilter.Configuration

    init(label: String, evidence: [RoomEvidence], configuration: RoomFilter.Configuration) {
        self.label = label
        self.evidence = evidence
        self.configuration = configuration
    }

    /// The same evidence and filter as ``RoomDecider`` with `decider`, so the evaluation's
    /// default row is what `proxima locate` runs.
    init(label: String, decider: RoomDecider.Configuration) {
        self.label = label
        evidence = (decider.signal ? [.signal] : []) + (decider.particleMass ? [.particleMass] : []) + decider.methods.map { .fix($0) }
        spread = decider.spread
        uncertaintySpread = decider.uncertaintySpread
        temperature = decider.temperature
        weakerLossScale = decider.weakerLossScale
        body = decider.body
        massOutlierShare = decider.massOutlierShare
        fingerprintsWeighParticles = decider.fingerprintsWeighParticles
        configuration = decider.filter
    }

    var methods: [LocateMethod] { evidence.compactMap { if case .fix(let method) = $0 { method } else { nil } } }

    /// The default before issue 10's second round: the particle filter's, fingerprint's and
    /// trilateration's fixes, 0.5 m spread, belief 0.93 to announce a room; chosen from a grid on
    /// examples/office.json (docs/evaluation.md). Kept as a comparison row.
    static let fixes = RoomFilterVariant(label: "room filter on fixes (default before)", evidence: [.fix(.particle), .fix(.fingerprint), .fix(.trilateration)],
                                         configuration: .init(switchRate: 0.5, threshold: 0.93))

    static func standard(_ direction: LocationReport.Direction) -> RoomFilterVariant {
        RoomFilterVariant(label: LocationReport.defaultRoomDecider, decider: direction == .phones ? .phones : .tags)
    }

    /// The default of `direction` and the designs compared with it: the default before, each
    /// new evidence alone, the other direction's default, and the signal model with fixes at a
    /// lower threshold (the fastest tag row of the grid in docs/evaluation.md).
    static func evaluated(_ direction: LocationReport.Direction) -> [RoomFilterVariant] {
        let mass = RoomFilterVariant(label: "room filter on particle mass", evidence: [.particleMass], configuration: .init(switchRate: 0.5, threshold: 0.93))
        let signal = RoomFilterVariant(label: "room filter on signal model", evidence: [.signal], configuration: .init(switchRate: 0.5, threshold: 0.93))
        var signalFixes = RoomFilterVariant(label: "room filter on signal model + fixes, threshold 0.9",
                                            evidence: [.signal, .fix(.particle), .fix(.fingerprint), .fix(.trilateration)],
                                            configuration: .init(switchRate: 0.5, threshold: 0.9))
        signalFixes.temperature = 1
        let other = direction == .phones
            ? RoomFilterVariant(label: "room filter, tags' default (signal + mass + fixes)", decider: .tags)
            : RoomFilterVariant(label: "room filter, phones' default (signal + mass)", decider: .phones)
        // The tags' defaults before half-second cycles (issue 10, ninth round) and before the
        // sharper signal model (eighth round).
        let tagsBefore = direction == .tags
            ? [RoomFilterVariant(label: "room filter, eighth round's default (fixed spread, doors 0.5/s)", decider: .tagsOneSecond),
               RoomFilterVariant(label: "room filter, signal temperature 1 (default before)", decider: .tagsTemperatureOne)] : []
        // The phones' defaults before: belief 0.9 (nineteenth round), fingerprints weighing the
        // particles (thirteenth), the symmetric signal loss (fourth).
        let symmetric = direction == .phones
            ? [RoomFilterVariant(label: "room filter, belief 0.9 (default before)", decider: .phonesBeliefNineTenths),
               RoomFilterVariant(label: "room filter, fingerprints weigh the particles (default before)", decider: .phonesFingerprintWeighted),
               RoomFilterVariant(label: "room filter, symmetric signal loss (default before)", decider: .phonesSymmetric),
               RoomFilterVariant(label: "room filter, phones' default + the user's body", decider: .phonesWithBody)] : []
        // What the server runs: no particle filter per subject (issue 10, tenth round).
        let withoutParticles = RoomFilterVariant(label: LocationReport.withoutParticlesRoomDecider,
                                                 decider: direction == .phones ? .phonesWithoutParticles : .tagsWithoutParticles)
        return [standard(direction), fixes] + symmetric + tagsBefore + [withoutParticles, mass, signal, signalFixes, other]
    }
}
