import Foundation

/// What /proc says about one process at a moment: the figures a long run must see flatten.
struct ProcessFigures: Sendable {
    var residentMegabytes: Double
    var fileDescriptors: Int
    var threads: Int
    var cpuSeconds: Double

    /// Nil once the process is gone.
    static func of(pid: Int32) -> ProcessFigures? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Double? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            // "VmRSS:\t  10240 kB", "Threads:\t9": a tab, sometimes spaces.
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Double($0) }
        }
        guard let residentKilobytes = field("VmRSS"), let threads = field("Threads") else { return nil }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        return ProcessFigures(residentMegabytes: residentKilobytes / 1024, fileDescriptors: descriptors, threads: Int(threads),
                              cpuSeconds: CPUTime.ofProcess("\(pid)") ?? 0)
    }
}

/// Batch acknowledgement times collected from many gateway tasks, read per sampling window and
/// for the whole phase.
actor LatencyLog {
    private var window: [Double] = []
    private var phase: [Double] = []
    private var windowSightings = 0
    private var refusals: [String: Int] = [:]

    func record(milliseconds: Double, sightings: Int) {
        window.append(milliseconds)
        phase.append(milliseconds)
        windowSightings += sightings
    }

    func refused(_ reason: String) { refusals[reason, default: 0] += 1 }

    func takeWindow() -> (latencies: [Double], sightings: Int) {
        defer { window.removeAll(keepingCapacity: true); windowSightings = 0 }
        return (window, windowSightings)
    }

    func takePhase() -> (latencies: [Double], refusals: [String: Int]) {
        defer { phase.removeAll(); refusals.removeAll() }
        return (phase, refusals)
    }
}

extension Array where Element == Double {
    /// The value below which `share` of the sorted values lie (nearest rank).
    func percentile(_ share: Double) -> Double {
        guard !isEmpty else { return .nan }
        let sorted = self.sorted()
        let rank = Int((share * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }
}
