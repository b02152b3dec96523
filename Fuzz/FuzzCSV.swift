// libFuzzer entry for the CSV imports: the server's RFC 4180 reader, its directory import
// (PUT /v1/directory, text/csv) and site-plan import (POST /v1/sites/{id}/plan, CSV), and
// `proxima locate`'s beacon and scan tables (BeaconLocate). Built by `Fuzz/run.sh csv` into a
// module named BeaconServer from the dependency-free files only; a trap, an ASan report or a
// broken invariant below is a finding. The input is one file, offered to every reader.
import BeaconKit
import BeaconLocate
import Foundation

private let organisation = Organisation(id: UUID(uuidString: "6C1A1F5E-0000-4000-8000-000000000001")!, name: "Nerdery",
                                        proximityUUIDs: [UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSV(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)

    do {
        let rows = try CSV.parse(text)
        // What the server writes, it reads back unchanged.
        requireFuzz((try? CSV.parse(CSV.render(rows))) == rows, "rows changed through render: \(rows)")
    } catch {
        requireFuzz(error.field.hasPrefix("line "), "a CSV refusal naming \(error.field)")
    }

    do {
        let directory = try Directory.parseCSV(text, organisation: organisation)
        if (try? directory.checkNamesAndMinors()) != nil {
            // An accepted import exports as CSV and imports back as the same directory.
            let exported = directory.csv()
            guard let again = try? Directory.parseCSV(exported, organisation: organisation) else {
                fatalError("an exported directory does not import: \(exported)")
            }
            requireFuzz(again == directory, "a directory changed through its CSV: \(exported)")
        }
    } catch {
        requireFuzz(error.field.hasPrefix("line "), "a directory refusal naming \(error.field)")
    }

    do {
        _ = try PlannedPosition.parseCSV(text)
    } catch {
        requireFuzz(error.field.hasPrefix("line "), "a plan refusal naming \(error.field)")
    }

    let beacons: [MappedBeacon]
    do {
        beacons = try BeaconTable.parse(text)
    } catch {
        requireFuzz(error.line >= 1 && error.column >= 0, "a beacon table refusal at line \(error.line), column \(error.column)")
        // Named as in the UCI dataset's scans (Tests/BeaconLocateTests/Fixtures/uci), a seed here.
        beacons = [MappedBeacon(id: "b3001", position: Position(x: 0, y: 0), measuredPower: nil),
                   MappedBeacon(id: "b3002", position: Position(x: 5, y: 0), measuredPower: -59)]
    }
    // The layouts `proxima locate` offers: plain, a truth position, a truth cell with groups.
    let layouts = [ScanTableLayout(missing: 100),
                   ScanTableLayout(missing: 100, truthX: "x", truthY: "y"),
                   ScanTableLayout(missing: -200, truthCell: "location", groupColumn: "date", timeColumn: "date")]
    for layout in layouts {
        do {
            let scans = try layout.parse(text, beacons: beacons)
            for scan in scans {
                requireFuzz(scan.readings.allSatisfy { $0.beacon < beacons.count && $0.rssi < 0 && $0.rssi >= -127 }, "reading outside the table")
                if let time = scan.time { requireFuzz(time.isFinite, "time \(time) on line \(scan.line)") }
            }
        } catch {
            requireFuzz(error.line >= 1 && error.column >= 0, "a scan table refusal at line \(error.line), column \(error.column)")
        }
    }
    return 0
}

private func requireFuzz(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
