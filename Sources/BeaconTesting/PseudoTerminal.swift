import CHCIShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal pair standing in for a UART: the code under test opens `devicePath` as a
/// serial port, the test plays the controller on `controller`.
public final class PseudoTerminal: @unchecked Sendable {
    public let controller: Int32
    public let devicePath: String

    public init() throws {
        var path = [CChar](repeating: 0, count: 128)
        let result = chci_open_pseudo_terminal(&path, UInt(path.count))
        guard result >= 0 else { throw BTVirtError(message: "cannot open a pseudo-terminal: errno \(-result)") }
        controller = result
        devicePath = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { Glibc.close(controller) }

    public func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(controller, $0.baseAddress, $0.count) }
    }

    /// Reads exactly `count` bytes, or fewer if the terminal closes.
    public func read(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let result = bytes.withUnsafeMutableBytes { Glibc.read(controller, $0.baseAddress! + got, count - got) }
            if result <= 0 { break }
            got += result
        }
        return Array(bytes[..<got])
    }
}
