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
