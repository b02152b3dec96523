import BeaconKit
import BeaconLocate
import Foundation
import Testing

/// The room decider's fix-free evidence: the signal model's room likelihood and the particle
/// filter's mass per room.
@Suite struct RoomEvidenceTests {
    let map = FixtureFiles.twoRooms
    let model = PathLossModel(exponent: 2)

    /// Readings as the model with the map's walls predicts them at `spot`.
    func readings(at spot: Position, anchors: AnchorSet) -> [Reading] {
        FixtureFiles.readings(at: spot, anchors: anchors).map { reading in
            Reading(beacon: reading.beacon, rssi: reading.rssi - map.wallLoss(from: spot, to: map.beacons[reading.beacon].position))
        }
    }

    @Test func theSignalModelPrefersTheRoomTheReadingsCameFrom() throws {
        let anchors = AnchorSet(map: map, model: model, attenuatingWalls: true)
        let signal = SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, temperature: 1)
        let west = try #require(signal.likelihoods(of: readings(at: Position(x: 3, y: 5), anchors: anchors)))
        let east = try #require(signal.likelihoods(of: readings(at: Position(x: 17, y: 5), anchors: anchors)))
        #expect(west[0] > 10 * west[1], "\(west)")
        #expect(east[1] > 10 * east[0], "\(east)")
        // A colder temperature weighs the same readings less, never the other way round.
        let logs = try #require(signal.logLikelihoods(of: readings(at: Position(x: 3, y: 5), anchors: anchors)))
        let cold = SignalRoomLikelihood.likelihoods(logs: logs, temperature: 0.25, outlierShare: 0)
        #expect(cold[1] / cold[0] > west[1] / west[0] && cold[1] < cold[0])
        #expect(signal.likelihoods(of: []) == nil)
    }

    @Test func aOneSidedLossForgivesAWeakReadingButNotAStrongOne() throws {
        let anchors = AnchorSet(map: map, model: model, attenuatingWalls: true)
        let symmetric = SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, temperature: 1)
        let oneSided = SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, weakerLossScale: 15, temperature: 1)
        #expect(oneSided.weakerLossScale == 15 && symmetric.weakerLossScale == symmetric.lossScale)
        let clean = readings(at: Position(x: 3, y: 5), anchors: anchors)
        // A west anchor heard far weaker than the model predicts anywhere on the map (-120 dBm,
        // as behind a body): it says less about the room under the one-sided loss.
        let westAnchor = try #require(anchors.xs.indices.first { anchors.xs[$0] < 10 })
        let shadowed = [Reading(beacon: westAnchor, rssi: -120)]
        let symmetricLogs = try #require(symmetric.logLikelihoods(of: shadowed))
        let oneSidedLogs = try #require(oneSided.logLikelihoods(of: shadowed))
        #expect(abs(oneSidedLogs[0] - oneSidedLogs[1]) < abs(symmetricLogs[0] - symmetricLogs[1]), "\(symmetricLogs) \(oneSidedLogs)")
        // Readings stronger than the model anywhere (0 dBm) are scored as before.
        let louder = clean.map { Reading(beacon: $0.beacon, rssi: 0) }
        let louderOneSided = try #require(oneSided.logLikelihoods(of: louder))
        #expect(louderOneSided == symmetric.logLikelihoods(of: louder))
        // The scale of one call overrides the instance's; a non-finite one is ignored.
        #expect(symmetric.logLikelihoods(of: shadowed, weakerLossScale: 15) == oneSidedLogs)
        #expect(oneSided.logLikelihoods(of: shadowed, weakerLossScale: .nan) == oneSidedLogs)
    }

    @Test func theBodyExplainsBeaconsBehindTheUserHeardWeaker() throws {
        let anchors = AnchorSet(map: map, model: model, attenuatingWalls: true)
        let plain = SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, temperature: 1)
        let bodyAware = SignalRoomLikelihood(rooms: map.rooms, anchors: anchors, temperature: 1, modelsBody: true)
        let body = BodyShadow(loss: 12, halfAngle: .pi / 3, headings: 8)
        // In the west room, facing east: the three beacons on the west wall are
        // behind the user and arrive 12 dB weaker than the model without a body says.
        let spot = Position(x: 6, y: 5)
        let clean = readings(at: spot, anchors: anchors)
        let behind = Set(anchors.xs.indices.filter { anchors.xs[$0] < 2 })
        #expect(behind.count == 3)
        let shadowed = clean.map { behind.contains($0.beacon) ? Reading(beacon: $0.beacon, rssi: $0.rssi - 12) : $0 }
        let withoutBody = try #require(plain.logLikelihoods(of: shadowed))
        let withBody = try #require(bodyAware.logLikelihoods(of: shadowed, body: body))
        #expect(withBody[0] - withBody[1] > withoutBody[0] - withoutBody[1] + 1, "\(withoutBody) \(withBody)")
        #expect(withBody[0] == 0, "the west room is the most likely: \(withBody)")
        // Readings without a body in the way still name the room they came from.
        let cleanWithBody = try #require(bodyAware.logLikelihoods(of: clean, body: body))
        #expect(cleanWithBody[0] == 0 && cleanWithBody[1] < -1, "\(cleanWithBody)")
        // An instance made without the directions ignores the body; no body is the plain model.
        #expect(plain.logLikelihoods(of: shadowed, body: body) == withoutBody)
        #expect(bodyAware.logLikelihoods(of: shadowed) == withoutBody)
        // Absurd parameters are clamped, not trusted.
        let clamped = BodyShadow(loss: .infinity, halfAngle: -1, headings: 1_000_000)
        #expect(clamped.loss == 10 && clamped.halfAngle == 0 && clamped.headings == 32)
    }

    /// The tags' decider blurs a fix by at least half its own uncertainty: a doubted fix just
    /// inside the east room says less about the room than a confident one at the same spot.
    @Test func aDoubtedFixSaysLessAboutItsRoom() throws {
        let spot = Position(x: 10.6, y: 5)
        let confident = Fix(position: spot, uncertainty: 0.4, method: .trilateration)
        let doubted = Fix(position: spot, uncertainty: 4, method: .trilateration)
        #expect(RoomDecider.fixSpread(doubted, spread: 0.5, uncertaintyShare: nil) == 0.5)
        #expect(RoomDecider.fixSpread(confident, spread: 0.5, uncertaintyShare: 0.5) == 0.5, "never narrower than the spread")
        #expect(RoomDecider.fixSpread(doubted, spread: 0.5, uncertaintyShare: 0.5) == 2)
        #expect(RoomDecider.fixSpread(Fix(position: spot, uncertainty: .infinity, method: .trilateration), spread: 0.5, uncertaintyShare: 0.5) == 0.5)

        let decider = RoomDecider(map: map, model: model, configuration: RoomDecider.Configuration(signal: false, particleMass: false, methods: [.trilateration],
                                                                                                   uncertaintySpread: 0.5))
        let sure = try #require(decider.likelihoods(fixes: [.trilateration: confident], particleMass: nil, correctedReadings: []))
        let unsure = try #require(decider.likelihoods(fixes: [.trilateration: doubted], particleMass: nil, correctedReadings: []))
        #expect(sure[1] > sure[0] && unsure[1] > unsure[0])
        #expect(unsure[1] / unsure[0] < sure[1] / sure[0], "\(unsure) against \(sure)")
        // Without the share both fixes weigh the same.
        let fixed = RoomDecider(map: map, model: model, configuration: RoomDecider.Configuration(signal: false, particleMass: false, methods: [.trilateration]))
        #expect(fixed.likelihoods(fixes: [.trilateration: doubted], particleMass: nil, correctedReadings: [])
                == fixed.likelihoods(fixes: [.trilateration: confident], particleMass: nil, correctedReadings: []))
    }

    @Test func signalGridsStayBoundedOnHugeMaps() {
        let rooms = (0..<200).map { index in
            Room(name: "r\(index)", outline: Polygon([Position(x: Double(index) * 50, y: 0), Position(x: Double(index) * 50 + 50, y: 0),
                                                      Position(x: Double(index) * 50 + 50, y: 50), Position(x: Double(index) * 50, y: 50)]))
        }
        let beacons = (0..<500).map { MappedBeacon(id: "b\($0)", position: Position(x: Double($0) * 20, y: 25)) }
        let big = SiteMap(width: 10_000, height: 50, rooms: rooms, beacons: beacons)
        let signal = SignalRoomLikelihood(rooms: rooms, anchors: AnchorSet(map: big, model: model))
        let likelihoods = signal.likelihoods(of: [Reading(beacon: 3, rssi: -60)])
        #expect(likelihoods?.count == 200)
    }

    @Test func particleMassFollowsTheCloudThroughTheDoor() throws {
        var locator = ScanLocator(method: .particle, map: map, model: model, attenuatingWalls: true)
        #expect(locator.particleMass(of: "tag", rooms: map.rooms) == nil)
        for second in 0..<8 {
            _ = locator.locate(readings(at: Position(x: 4, y: 5), anchors: locator.anchors), receiver: "tag", at: Double(second))
        }
        let west = try #require(locator.particleMass(of: "tag", rooms: map.rooms))
        #expect(west.count == 3 && abs(west.reduce(0, +) - 1) < 1e-9)
        #expect(west[0] > 0.9, "\(west)")
        for second in 8..<30 {
            _ = locator.locate(readings(at: Position(x: 16, y: 5), anchors: locator.anchors), receiver: "tag", at: Double(second))
        }
        let east = try #require(locator.particleMass(of: "tag", rooms: map.rooms))
        #expect(east[1] > 0.9, "\(east)")
    }
}
