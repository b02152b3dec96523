import BeaconKit
import BeaconLocate
import Foundation

enum FixtureFiles {
    static func url(_ path: String) -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(path)
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: url(path)), as: UTF8.self)
    }

    /// The gzip fixture through the system's gzip (Foundation has no inflater on Linux).
    static func gunzipped(_ path: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", url(path).path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    /// Synthetic readings from the model itself, plus optional per-beacon offsets.
    static func readings(at point: Position, anchors: AnchorSet, offsets: [Int: Double] = [:]) -> [Reading] {
        anchors.xs.indices.map { index in
            let dx = point.x - anchors.xs[index], dy = point.y - anchors.ys[index]
            return Reading(beacon: index, rssi: anchors.model.expectedRSSI(power: anchors.powers[index], squaredDistance: dx * dx + dy * dy)
                + (offsets[index] ?? 0))
        }
    }

    /// A 20 m × 10 m floor: two rooms joined by a door in the middle wall, 8 beacons around.
    static let twoRooms: SiteMap = {
        let beacons = [(1.0, 1.0), (10.0, 0.5), (19.0, 1.0), (19.5, 5.0), (19.0, 9.0), (10.0, 9.5), (1.0, 9.0), (0.5, 5.0)]
            .enumerated().map { MappedBeacon(id: "b\($0.offset + 1)", position: Position(x: $0.element.0, y: $0.element.1), measuredPower: -59) }
        return SiteMap(name: "two rooms", width: 20, height: 10,
                       walls: [MapWall(from: Position(x: 10, y: 0), to: Position(x: 10, y: 4), attenuation: 6),
                               MapWall(from: Position(x: 10, y: 6), to: Position(x: 10, y: 10), attenuation: 6)],
                       rooms: [Room(name: "west", outline: Polygon([Position(x: 0, y: 0), Position(x: 10, y: 0), Position(x: 10, y: 10), Position(x: 0, y: 10)])),
                               Room(name: "east", outline: Polygon([Position(x: 10, y: 0), Position(x: 20, y: 0), Position(x: 20, y: 10), Position(x: 10, y: 10)]))],
                       doors: [Door(name: "middle door", position: Position(x: 10, y: 5))],
                       beacons: beacons,
                       receivers: [MappedReceiver(name: "pi-west", room: "west"), MappedReceiver(name: "pi-east", position: Position(x: 15, y: 5))],
                       pointsOfInterest: [PointOfInterest(name: "car", position: Position(x: 18, y: 8))])
    }()
}
