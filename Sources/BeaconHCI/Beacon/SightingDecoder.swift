import BeaconKit

/// Turns controller events into sightings. Live scans and capture replays both go through it,
/// so a replay yields exactly the sightings the live scan did.
public struct SightingDecoder: Sendable {
    public var receiver: String

    /// What a packet held besides sightings, for diagnostics.
    public struct Outcome: Sendable, Hashable {
        public var sightings: [Sighting] = []
        /// Reports whose advertising data broke the AD rules (air is untrusted: one bad
        /// advertiser must not stop a scan), with the reason.
        public var malformed: [DecodeError] = []

        public init(sightings: [Sighting] = [], malformed: [DecodeError] = []) {
            self.sightings = sightings
            self.malformed = malformed
        }
    }

    public init(receiver: String) { self.receiver = receiver }

    /// The sightings in one packet: every beacon frame of every report of an LE Advertising
    /// Report or LE Extended Advertising Report event received from the controller. Other
    /// packets give none.
    public func decode(_ packet: TimestampedPacket) -> Outcome {
        var outcome = Outcome()
        guard packet.direction == .received, packet.packet.type == .event,
              packet.packet.body.count >= 3, packet.packet.body[0] == HCIEventCode.leMeta.rawValue,
              packet.packet.body[2] == LEMetaSubevent.advertisingReport.rawValue
                || packet.packet.body[2] == LEMetaSubevent.extendedAdvertisingReport.rawValue
        else { return outcome }
        // One reading of the event, with one rule for a broken report: see LocatedFrame.scan(hciEvent:).
        let found: HCIEventFrames
        do {
            found = try HCIEventFrames(hciEvent: packet.packet.body)
        } catch {
            outcome.malformed.append(error)
            return outcome
        }
        outcome.sightings = found.frames.map {
            Sighting(time: packet.seconds, receiver: receiver, address: $0.header.address, rssi: $0.header.rssi, frame: $0.frame)
        }
        outcome.malformed = found.malformedReports
        return outcome
    }
}
