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
        let reports: [AdvertisingReport]
        do {
            reports = try AdvertisingReport.decode(hciEvent: packet.packet.body)
        } catch {
            outcome.malformed.append(error)
            return outcome
        }
        for report in reports where report.isDataComplete {
            do {
                for frame in try BeaconFrame.decodeAll(advertisingData: report.data) {
                    outcome.sightings.append(Sighting(time: packet.seconds, receiver: receiver,
                                                      address: report.address, rssi: report.rssi, frame: frame))
                }
            } catch {
                outcome.malformed.append(error)
            }
        }
        return outcome
    }
}
