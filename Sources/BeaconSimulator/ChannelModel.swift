import BeaconKit
import Foundation

/// The radio channel's parameters. Each physical effect has one knob; docs/scenarios.md gives
/// the source of every model and the reasoning behind each default.
public struct ChannelModel: Sendable, Hashable {
    /// Per-packet small-scale fading.
    public enum Fading: Sendable, Hashable {
        /// No fast fading: every packet of a link has the same power (plus shadowing).
        case none
        /// Independent Gaussian noise in dB on every packet, with this standard deviation. Not a
        /// physical model; it is the textbook "RSSI = mean + N(0, σ²)" used to state ranging claims.
        case logNormal(sigma: Double)
        /// Rician fading (Rice 1944; Rappaport, *Wireless Communications*, 2nd ed., §5.6.2) whose
        /// K-factor falls linearly in dB from `kFactorNear` at 1 m to 0 (linear) at
        /// `rayleighDistance`, beyond which fading is Rayleigh (no dominant line-of-sight ray).
        /// Each of the three advertising channels adds its own fixed per-link offset drawn from
        /// N(0, `channelSpread`²): multipath is frequency selective, so 2402, 2426 and 2480 MHz
        /// fade differently on the same link (Faragher and Harle, IEEE JSAC 33(11), 2015).
        case rician(kFactorNear: Double, rayleighDistance: Double, channelSpread: Double)

        public static let standard = Fading.rician(kFactorNear: 9, rayleighDistance: 8, channelSpread: 1.5)
    }

    /// n in the log-distance model PL(d) = PL(1 m) + 10·n·log10(d) (Rappaport §4.9.1): 2 in free
    /// space, 1.6–1.8 in corridors, 2–3 in open offices and shops.
    public var pathLossExponent: Double
    /// Loss in dB between the transmit power and the mean RSSI at 1 m, antennas included.
    /// 59 makes a 0 dBm beacon read Apple's default measured power of −59 dBm at 1 m.
    public var referenceLoss: Double
    /// σ of log-normal shadowing in dB (Rappaport §4.9.2); indoor measurements give 3–8 dB.
    public var shadowingSigma: Double
    /// Distance over which shadowing decorrelates, Gudmundson's exponential model
    /// R(Δx) = σ²·exp(−Δx / d) (Electronics Letters 27(23), 1991). A receiver that does not
    /// move keeps its shadowing value: it is an offset, not noise.
    public var correlationDistance: Double
    public var fading: Fading
    /// Packets weaker than this (dBm) are not received. BLE requires −70 dBm (Core Spec Vol 6
    /// Part A §4.1); current phone and gateway chips reach about −100 dBm.
    public var sensitivity: Double
    /// Extra loss in dB when the walker's body blocks the line of sight to the phone. Reported
    /// human-body losses at 2.4 GHz range from a few dB to about 20 dB.
    public var bodyLoss: Double
    /// A colliding packet survives only if it is this many dB stronger than the interferer: the
    /// co-channel interference ratio C/I of Core Spec Vol 6 Part A §4.2 (21 dB).
    public var captureRatio: Double
    /// Mean received power (dBm; path loss, walls and antenna gain, but no shadowing, fading or
    /// body) at or above which ground truth says the receiver is within a beacon's range. By
    /// default the sensitivity: a beacon is "there" where its mean signal can be received, which
    /// is what Core Location's region membership means (the beacon is heard), not a room boundary.
    public var presenceThreshold: Double
    /// Whether RSSI is rounded to whole dBm as an HCI report carries it (Core Spec Vol 4 Part E
    /// §7.7.65.2, a signed byte).
    public var quantize: Bool

    public init(pathLossExponent: Double = 2.0, referenceLoss: Double = 59, shadowingSigma: Double = 4,
                correlationDistance: Double = 3, fading: Fading = .standard, sensitivity: Double = -100,
                bodyLoss: Double = 10, captureRatio: Double = 21, presenceThreshold: Double? = nil,
                quantize: Bool = true) {
        self.pathLossExponent = pathLossExponent
        self.referenceLoss = referenceLoss
        self.shadowingSigma = shadowingSigma
        self.correlationDistance = correlationDistance
        self.fading = fading
        self.sensitivity = sensitivity
        self.bodyLoss = bodyLoss
        self.captureRatio = captureRatio
        self.presenceThreshold = presenceThreshold ?? sensitivity
        self.quantize = quantize
    }
}

/// The physical models as pure functions, so tests can check each on its own.
public enum Propagation {
    /// Below this distance the log-distance law is not used (near field, and log10(0)).
    public static let minimumDistance = 0.1

    /// The three BLE advertising channels and their centre frequencies (Core Spec Vol 6 Part B
    /// §1.4.1): channel 37 at 2402 MHz, 38 at 2426 MHz, 39 at 2480 MHz.
    public static let advertisingChannels: [(index: UInt8, megahertz: Double)] = [(37, 2402), (38, 2426), (39, 2480)]

    /// Air time of an iBeacon ADV_NONCONN_IND on the LE 1M PHY: preamble 1 + access address 4 +
    /// header 2 + AdvA 6 + AdvData 30 + CRC 3 = 46 bytes = 368 µs (Core Spec Vol 6 Part B §2.1).
    public static let packetDuration = 46.0 * 8 / 1_000_000

    /// Gap between the starts of an event's packets on consecutive channels (packet + ~150 µs).
    public static let channelSpacing = packetDuration + 0.000_150

    /// Mean received power in dBm from the log-distance model, without shadowing or fading.
    public static func meanPower(txPower: Double, distance: Double, channel: ChannelModel) -> Double {
        txPower - channel.referenceLoss - 10 * channel.pathLossExponent * log10(max(distance, minimumDistance))
    }

    /// Free-space loss difference of an advertising channel relative to channel 38 (Friis: 20·log10 f).
    public static func frequencyOffset(megahertz: Double) -> Double { -20 * log10(megahertz / 2426) }

    /// Total wall attenuation along the floor-plane segment a–b (COST 231 multi-wall model,
    /// Damosso (ed.), COST 231 Final Report, 1999, §4.7: each crossed wall adds its own loss).
    public static func wallLoss(from a: Position3D, to b: Position3D, walls: [Wall]) -> Double {
        var loss = 0.0
        for wall in walls where segmentsIntersect(a, b, wall.from, wall.to) { loss += wall.attenuation }
        return loss
    }

    /// Whether floor segments p1–p2 and q1–q2 cross (orientation test; touching counts).
    public static func segmentsIntersect(_ p1: Position3D, _ p2: Position3D, _ q1: Position3D, _ q2: Position3D) -> Bool {
        func orientation(_ a: Position3D, _ b: Position3D, _ c: Position3D) -> Double { (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x) }
        func onSegment(_ a: Position3D, _ b: Position3D, _ c: Position3D) -> Bool {
            min(a.x, b.x) <= c.x && c.x <= max(a.x, b.x) && min(a.y, b.y) <= c.y && c.y <= max(a.y, b.y)
        }
        let d1 = orientation(q1, q2, p1), d2 = orientation(q1, q2, p2)
        let d3 = orientation(p1, p2, q1), d4 = orientation(p1, p2, q2)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        if d1 == 0 && onSegment(q1, q2, p1) { return true }
        if d2 == 0 && onSegment(q1, q2, p2) { return true }
        if d3 == 0 && onSegment(p1, p2, q1) { return true }
        if d4 == 0 && onSegment(p1, p2, q2) { return true }
        return false
    }

    /// Radius of the body, and how far behind the phone its centre is (metres). The phone is held
    /// in front of the chest, so beacons behind the walker are seen through the torso.
    public static let bodyRadius = 0.2
    public static let bodyOffset = 0.25

    /// Whether the walker's body (a disc behind the phone, opposite to its heading) crosses the
    /// floor-plane line of sight from the phone to the beacon.
    public static func bodyBlocks(phone: Position3D, heading: (x: Double, y: Double), beacon: Position3D) -> Bool {
        let centreX = phone.x - heading.x * bodyOffset, centreY = phone.y - heading.y * bodyOffset
        let dx = beacon.x - phone.x, dy = beacon.y - phone.y
        let lengthSquared = dx * dx + dy * dy
        guard lengthSquared > 0 else { return false }
        // Closest point of the segment to the body's centre.
        let t = max(0, min(1, ((centreX - phone.x) * dx + (centreY - phone.y) * dy) / lengthSquared))
        let nearestX = phone.x + t * dx - centreX, nearestY = phone.y + t * dy - centreY
        return nearestX * nearestX + nearestY * nearestY < bodyRadius * bodyRadius
    }

    /// Gudmundson's correlation between shadowing values `moved` metres apart.
    public static func shadowingCorrelation(moved: Double, correlationDistance: Double) -> Double {
        guard correlationDistance > 0 else { return moved > 0 ? 0 : 1 }
        return exp(-moved / correlationDistance)
    }

    /// Rician K-factor (linear) at a distance under the standard fading profile.
    public static func kFactor(distance: Double, kFactorNear: Double, rayleighDistance: Double) -> Double {
        guard distance < rayleighDistance, rayleighDistance > 1 else { return 0 }
        let fraction = max(0, (distance - 1) / (rayleighDistance - 1))
        let kDecibels = kFactorNear * (1 - fraction)
        return fraction >= 1 ? 0 : pow(10, kDecibels / 10)
    }

    /// One fading sample in dB: the power of a Rician channel with unit mean power,
    /// |√(K/(K+1))·e^{jφ} + √(1/(K+1))·CN(0,1)|². K = 0 gives Rayleigh fading.
    public static func ricianFadingDecibels(kFactor: Double, random: inout SeededGenerator) -> Double {
        let lineOfSight = (kFactor / (kFactor + 1)).squareRoot()
        let scatter = (1 / (2 * (kFactor + 1))).squareRoot()
        // The scattered part is circularly symmetric, so the line-of-sight phase can be taken as 0.
        let (first, second) = random.gaussianPair()
        let real = lineOfSight + scatter * first
        let imaginary = scatter * second
        return 10 * log10(max(real * real + imaginary * imaginary, 1e-12))
    }
}
