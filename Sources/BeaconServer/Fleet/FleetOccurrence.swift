import BeaconFleet
import BeaconKit
import Foundation

/// A fleet-health finding that changed level, as an event on the feeds:
/// `{"event":"alertRaised","time":…,"alertID":7,"check":"missing","level":"alert","previousLevel":"ok",
///   "reason":"not heard for 12 s by …","subject":{"kind":"beacon","name":"UUID:1:1001",…}}`.
public struct FleetOccurrence: Sendable, Hashable, Codable {
    /// `alertRaised` when the level grew, `alertCleared` when it fell back to ok, `alertLowered`
    /// when it fell but not to ok (alert to warning).
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable { case alertRaised, alertCleared, alertLowered }

    /// Who the finding is about: a beacon (registered or not, with its identity) or a gateway.
    public struct Subject: Sendable, Hashable, Codable {
        public var kind: String
        public var name: String
        public var uuid: UUID?
        public var major: UInt16?
        public var minor: UInt16?

        public init(_ subject: FleetSubject) {
            switch subject {
            case .beacon(let identity):
                kind = "beacon"
                name = "\(identity.uuid.uuidString):\(identity.major):\(identity.minor)"
                uuid = identity.uuid
                major = identity.major
                minor = identity.minor
            case .gateway(let gateway):
                kind = "gateway"
                name = gateway
            }
        }

        /// The stored key of an alert's subject.
        public var key: String { "\(kind):\(name)" }
    }

    public var kind: Kind
    public var time: Double
    /// The alert this change opened, moved or closed (`GET /v1/fleet/alerts`, ack).
    public var alertID: Int
    public var check: FleetCheck
    public var level: HealthLevel
    public var previousLevel: HealthLevel
    public var reason: String
    public var subject: Subject

    private enum CodingKeys: String, CodingKey { case kind = "event", time, alertID, check, level, previousLevel, reason, subject }

    public init(kind: Kind, time: Double, alertID: Int, check: FleetCheck, level: HealthLevel, previousLevel: HealthLevel,
                reason: String, subject: Subject) {
        self.kind = kind
        self.time = time
        self.alertID = alertID
        self.check = check
        self.level = level
        self.previousLevel = previousLevel
        self.reason = reason
        self.subject = subject
    }

    static func kind(of transition: FleetTransition) -> Kind {
        if transition.to == .ok { return .alertCleared }
        return transition.isRaised ? .alertRaised : .alertLowered
    }
}
