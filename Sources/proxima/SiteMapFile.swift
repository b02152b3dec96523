import BeaconLocate
import BeaconSimulator
import Foundation

/// `--map FILE` takes a site map or a scenario: a scenario with rooms is its own site map
/// (`Scenario.siteMap`: venue, walls, rooms, doors, fixed beacons and gateways).
enum SiteMapFile {
    static func load(_ path: String) throws(SiteMapError) -> SiteMap {
        let url = URL(fileURLWithPath: path)
        do { return try SiteMap.load(contentsOf: url) } catch let mapError {
            // Only a document that is a valid scenario is read as one; otherwise the map's own
            // error, which names the field, is the one to show.
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
            guard let size, size <= SiteMap.Limits.bytes, let scenario = try? Scenario.load(contentsOf: url) else { throw mapError }
            return scenario.siteMap
        }
    }
}
