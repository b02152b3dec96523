import BeaconKit
import CHCIShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a controller is reached: a Linux HCI device, an H4 unix socket, or an H4 serial port.
public enum ControllerEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// `hciN` through the kernel's HCI socket.
    case device(index: Int)
    /// H4 over a unix stream socket, e.g. btvirt's `/tmp/bt-server-le`.
    case h4Socket(path: String)
    /// H4 over a UART, e.g. an nRF52 running Zephyr's hci_uart sample.
    case serial(path: String, baud: Int, flowControl: Bool)

    /// Zephyr's and Nordic's HCI UART samples default to 1 Mbit/s with RTS/CTS.
    public static let defaultSerialBaud = 1_000_000

    /// Parses `hci0` (or plain `0`).
    public static func parseDevice(_ text: String) throws(HCITransportError) -> ControllerEndpoint {
        let digits = text.hasPrefix("hci") ? String(text.dropFirst(3)) : text
        guard let index = Int(digits), index >= 0, index < 0xFFFF else {
            throw HCITransportError(transport: text, message: "expected a device name like hci0")
        }
        return .device(index: index)
    }

    /// Parses `DEV[@BAUD][,noflow]`, e.g. `/dev/ttyACM0@1000000`.
    public static func parseSerial(_ text: String) throws(HCITransportError) -> ControllerEndpoint {
        var spec = Substring(text)
        var flowControl = true
        if spec.hasSuffix(",noflow") {
            flowControl = false
            spec = spec.dropLast(",noflow".count)
        }
        let parts = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = parts.first, !path.isEmpty else {
            throw HCITransportError(transport: text, message: "expected DEV[@BAUD][,noflow], e.g. /dev/ttyACM0@1000000")
        }
        var baud = defaultSerialBaud
        if parts.count == 2 {
            guard let value = Int(parts[1]), value > 0 else {
                throw HCITransportError(transport: text,
                    message: "baud rate '\(parts[1])' is not a positive number (expected e.g. 115200 or 1000000)")
            }
            baud = value
        }
        return .serial(path: String(path), baud: baud, flowControl: flowControl)
    }

    public var description: String {
        switch self {
        case .device(let index): "hci\(index)"
        case .h4Socket(let path): "h4:\(path)"
        case .serial(let path, _, _): "serial:\(path)"
        }
    }

    /// Opens the link. Errors say what failed and what to try instead.
    public func open() throws -> FileDescriptorTransport {
        switch self {
        case .device(let index): try Self.openHCISocket(index: index, name: description)
        case .h4Socket(let path): try Self.connectUnixSocket(path: path, name: description)
        case .serial(let path, let baud, let flow): try Self.openSerial(path: path, baud: baud, flowControl: flow, name: description)
        }
    }

    static func openHCISocket(index: Int, name: String) throws -> FileDescriptorTransport {
        var channel: Int32 = 0
        let result = chci_open_hci_socket(Int32(index), &channel)
        if result == -EAFNOSUPPORT {
            throw HCITransportError(transport: name,
                message: "this kernel has no Bluetooth sockets (socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI) failed with "
                    + "EAFNOSUPPORT). Attach the controller over H4 instead: --h4 PATH for a unix socket "
                    + "(e.g. btvirt's /tmp/bt-server-le) or --serial /dev/ttyACM0[@BAUD] for an HCI UART controller.")
        }
        if result < 0 {
            let code = -result
            var hint = ""
            if code == ENODEV { hint = "; no such controller, list them with `ls /sys/class/bluetooth`" }
            if code == EPERM || code == EACCES { hint = "; HCI sockets need root or CAP_NET_RAW and CAP_NET_ADMIN" }
            throw HCITransportError(transport: name,
                message: "cannot open the HCI socket: \(String(cString: strerror(code))) (errno \(code))\(hint)")
        }
        let transport = try FileDescriptorTransport(descriptor: result, name: name)
        transport.channelNote = channel == Int32(CHCI_CHANNEL_USER.rawValue) ? "user channel" : "raw channel"
        return transport
    }

    static func connectUnixSocket(path: String, name: String) throws -> FileDescriptorTransport {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HCITransportError(transport: name, message: "cannot create a unix socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            Glibc.close(descriptor)
            throw HCITransportError(transport: name, message: "socket path is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw HCITransportError(transport: name,
                message: "cannot connect to \(path): \(String(cString: strerror(code))) (errno \(code)); is the H4 server (e.g. btvirt -s) running?")
        }
        return try FileDescriptorTransport(descriptor: descriptor, name: name)
    }

    static func openSerial(path: String, baud: Int, flowControl: Bool, name: String) throws -> FileDescriptorTransport {
        let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw HCITransportError(transport: name,
                message: "cannot open \(path): \(String(cString: strerror(code))) (errno \(code))")
        }
        let result = chci_configure_serial(descriptor, Int32(clamping: baud), flowControl ? 1 : 0)
        guard result == 0 else {
            Glibc.close(descriptor)
            let reason = result == -EINVAL
                ? "baud rate \(baud) is not one termios supports (try 115200, 1000000 or 2000000)"
                : "\(String(cString: strerror(-result))) (errno \(-result)); is \(path) a serial device?"
            throw HCITransportError(transport: name, message: "cannot configure \(path) as a raw serial port: \(reason)")
        }
        return try FileDescriptorTransport(descriptor: descriptor, name: name)
    }
}
