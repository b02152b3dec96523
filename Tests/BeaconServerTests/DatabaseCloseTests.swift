@testable import BeaconServer
import Foundation
import Testing

/// `proxima serve` closes its database while its task is being cancelled (SIGTERM): the close
/// must still close the SQLite handle, or a debug build traps in the connection's deinit.
@Suite("Closing the database")
struct DatabaseCloseTests {
    @Test func aCancelledTaskStillClosesTheSQLiteHandle() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("close-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try await ProximaDatabase.open(.sqliteFile(path: path))
        let closing = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await database.close()
        }
        await closing.value
        #expect(database.sqliteHandleIsClosed == true, "the close gave up in the cancelled task and left the handle open")
    }
}
