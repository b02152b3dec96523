// libFuzzer entry for the simulator's scenario JSON (BeaconSimulator) and BeaconLocate's site-map
// JSON. Built by `Fuzz/run.sh scenario` into the BeaconSimulator module; a trap, an ASan report
// or a broken invariant below is a finding. The input is one document, read as both formats
// (their `venue` objects share a form, so seeds of one exercise the other).
import BeaconKit
import BeaconLocate
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScenario(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)

    do {
        let scenario = try Scenario.decode(data)
        requireFuzz(scenario.duration.isFinite && scenario.duration > 0, "duration \(scenario.duration)")
        requireFuzz(!scenario.beacons.isEmpty && !scenario.receivers.isEmpty, "a scenario without beacons or receivers")
        for beacon in scenario.beacons {
            requireFuzz(beacon.position.x.isFinite && beacon.position.y.isFinite, "beacon \(beacon.name) at \(beacon.position)")
        }
        // Regions the engine would monitor: each one read must be a valid region.
        requireFuzz(scenario.monitoringRegions.count == scenario.regions.count, "a region the engine cannot monitor")
        // A scenario is also a site map (`proxima locate --map SCENARIO`).
        let map = scenario.siteMap
        requireFuzz(map.beacons.count <= scenario.beacons.count && map.width == scenario.venue.width, "the scenario's map differs from it")
    } catch {
        requireFuzz(!error.expected.isEmpty, "a scenario refusal without what was expected: \(error)")
    }

    do {
        let map = try SiteMap.decode(data)
        requireFuzz(map.width.isFinite && map.height.isFinite && map.width > 0 && map.height > 0, "map size \(map.width) × \(map.height)")
        // What a locator asks of every map: the room at a point and the wall loss across it.
        let corner = Position(x: 0, y: 0), middle = Position(x: map.width / 2, y: map.height / 2)
        _ = map.room(at: middle)
        let loss = map.wallLoss(from: corner, to: Position(x: map.width, y: map.height))
        requireFuzz(loss.isFinite && loss >= 0, "wall loss \(loss)")
        for receiver in map.receivers { _ = map.room(ofReceiver: receiver.name) }
    } catch {
        requireFuzz(!error.expected.isEmpty, "a map refusal without what was expected: \(error)")
    }
    return 0
}

private func requireFuzz(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
