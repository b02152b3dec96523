import Foundation

/// Where Proxima keeps the user's files (saved transmitters, monitored regions).
///
/// `PROXIMA_CONFIG_DIR` wins, so tests and several users on one box can keep apart; then the XDG
/// base directory rule (`$XDG_CONFIG_HOME/proxima`), then `~/.config/proxima`.
public enum ConfigurationDirectory {
    public static func url(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment["PROXIMA_CONFIG_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit, isDirectory: true)
        }
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("proxima", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".config", isDirectory: true)
            .appendingPathComponent("proxima", isDirectory: true)
    }

    /// Writes a file in the configuration directory atomically, creating the directory first,
    /// so that an interrupted save never leaves a half-written file behind.
    public static func write(_ data: Data, to name: String,
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let directory = url(environment: environment)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try data.write(to: directory.appendingPathComponent(name), options: .atomic)
    }
}
