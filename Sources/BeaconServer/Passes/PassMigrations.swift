import Foundation

/// Wallet passes (issue 17): templates per site, issued passes with the beacons they carry,
/// the devices registered for their updates, and the pushes waiting to be sent.
enum PassMigrations {
    static let passes = Migrations.Migration(version: 16, name: "wallet passes") { dialect in
        let id = Migrations.serialKey(dialect)
        return [
            // Images are kept as base64 text: one column type on both databases, and a
            // template is read whole whenever a pass is signed anyway.
            """
            CREATE TABLE pass_templates (site_id BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
              pass_json TEXT NOT NULL, images TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
            // One row; its value is the last update tag handed out. Taking the next tag locks
            // the row until commit, so tags become visible in the order they were taken.
            "CREATE TABLE pass_update_counter (id BIGINT PRIMARY KEY, value BIGINT NOT NULL)",
            "INSERT INTO pass_update_counter (id, value) VALUES (1, 0)",
            """
            CREATE TABLE passes (serial TEXT PRIMARY KEY, site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
              pass_type_identifier TEXT NOT NULL, visitor TEXT NOT NULL, authentication_token TEXT NOT NULL,
              version BIGINT NOT NULL, update_tag BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
              updated_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX passes_site ON passes (site_id, created_at)",
            "CREATE INDEX passes_update_tag ON passes (update_tag)",
            """
            CREATE TABLE pass_beacons (serial TEXT NOT NULL REFERENCES passes(serial) ON DELETE CASCADE, position BIGINT NOT NULL,
              uuid TEXT NOT NULL, major BIGINT NOT NULL, minor BIGINT NOT NULL, relevant_text TEXT NOT NULL,
              PRIMARY KEY (serial, position))
            """,
            "CREATE INDEX pass_beacons_identity ON pass_beacons (uuid, major, minor)",
            """
            CREATE TABLE pass_registrations (device_library_identifier TEXT NOT NULL, pass_type_identifier TEXT NOT NULL,
              serial TEXT NOT NULL REFERENCES passes(serial) ON DELETE CASCADE, push_token TEXT NOT NULL,
              created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (device_library_identifier, pass_type_identifier, serial))
            """,
            "CREATE INDEX pass_registrations_serial ON pass_registrations (serial)",
            """
            CREATE TABLE pass_pushes (id \(id), push_token TEXT NOT NULL, pass_type_identifier TEXT NOT NULL,
              queued_at DOUBLE PRECISION NOT NULL, attempts BIGINT NOT NULL DEFAULT 0, UNIQUE (push_token, pass_type_identifier))
            """,
        ]
    }
}
