import Foundation

/// Migration 9: treasure hunts (stamps, each device's run) and proximity offers (offers, per-site
/// delivery settings, each device's rate-limit state and its recent deliveries).
enum HuntMigrations {
    static let huntsAndOffers = Migrations.Migration(version: 9, name: "treasure hunts and offers") { dialect in
        let id = Migrations.serialKey(dialect)
        return [
            """
            CREATE TABLE hunts (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE, name TEXT NOT NULL,
              time_limit DOUBLE PRECISION NOT NULL, max_speed DOUBLE PRECISION NOT NULL, stamp_reach DOUBLE PRECISION NOT NULL,
              reward TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX hunts_site ON hunts (site_id)",
            """
            CREATE TABLE hunt_stamps (hunt_id BIGINT NOT NULL REFERENCES hunts(id) ON DELETE CASCADE, number BIGINT NOT NULL,
              zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE, PRIMARY KEY (hunt_id, number))
            """,
            "CREATE INDEX hunt_stamps_zone ON hunt_stamps (zone_id)",
            """
            CREATE TABLE hunt_runs (hunt_id BIGINT NOT NULL REFERENCES hunts(id) ON DELETE CASCADE,
              device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE, status TEXT NOT NULL, stamps TEXT NOT NULL,
              stamp_count BIGINT NOT NULL, duration DOUBLE PRECISION, reason TEXT, rewarded_at DOUBLE PRECISION,
              updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (hunt_id, device_id))
            """,
            "CREATE INDEX hunt_runs_board ON hunt_runs (hunt_id, status, duration)",
            "CREATE INDEX hunt_runs_device ON hunt_runs (device_id)",
            """
            CREATE TABLE offers (id \(id), site_id BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
              zone_id BIGINT NOT NULL REFERENCES zones(id) ON DELETE CASCADE, title TEXT NOT NULL, body TEXT NOT NULL,
              created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX offers_zone ON offers (zone_id)",
            "CREATE INDEX offers_site ON offers (site_id)",
            """
            CREATE TABLE offer_settings (site_id BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
              settings TEXT NOT NULL, delivered BIGINT NOT NULL, refused BIGINT NOT NULL)
            """,
            """
            CREATE TABLE offer_devices (device_id TEXT PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
              last_choice TEXT NOT NULL, window_start DOUBLE PRECISION NOT NULL, in_window BIGINT NOT NULL,
              delivered BIGINT NOT NULL, refused BIGINT NOT NULL)
            """,
            """
            CREATE TABLE offer_deliveries (id \(id), device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
              time DOUBLE PRECISION NOT NULL, choices TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
            """,
            "CREATE INDEX offer_deliveries_device ON offer_deliveries (device_id, id)",
        ]
    }
}
