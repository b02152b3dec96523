import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Standard output for every command. Each write goes straight to the descriptor and throws
/// when it fails (a full disk, /dev/full, a closed pipe), so the command stops with an error
/// and a non-zero exit instead of losing its output silently (`print` buffers and drops the
/// error) or trapping (`FileHandle.write(_:)`).
enum StandardOutput {
    static func write(_ text: String) throws(StandardOutputError) {
        var bytes = Array(text.utf8)
        let total = bytes.count
        var offset = 0
        let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
            while offset < total {
                let written = Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, total - offset)
                if written >= 0 {
                    offset += written
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN: waitUntilWritable()
                case let code: return code
                }
            }
            return nil
        }
        if let failure { throw StandardOutputError(code: failure) }
    }

    static func line(_ text: String) throws(StandardOutputError) {
        try write(text + "\n")
    }

    /// One JSON object on a line, encoded the same way by every command: keys sorted, slashes
    /// not escaped (an Eddystone URL reads as typed).
    static func jsonLine(_ value: some Encodable) throws {
        try line(String(decoding: try jsonEncoder.encode(value), as: UTF8.self))
    }

    private static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A descriptor some other program left non-blocking: wait for room instead of spinning.
    private static func waitUntilWritable() {
        var descriptor = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        _ = poll(&descriptor, 1, -1)
    }
}

struct StandardOutputError: Error, CustomStringConvertible {
    var code: Int32

    var description: String { "cannot write to standard output: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Collects lines and writes them in large blocks: printing hundreds of thousands of lines one
/// write at a time would cost more than simulating them.
struct StandardOutputBuffer {
    private var buffer = ""

    mutating func append(_ line: String) throws(StandardOutputError) {
        buffer += line
        buffer += "\n"
        if buffer.utf8.count > 64 * 1024 { try flush() }
    }

    mutating func flush() throws(StandardOutputError) {
        guard !buffer.isEmpty else { return }
        defer { buffer = "" }
        try StandardOutput.write(buffer)
    }
}
