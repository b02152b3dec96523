import BeaconKit

/// A link to one HCI controller: packets out, a stream of packets in.
public protocol HCITransport: Sendable {
    /// A short name for the controller, used as the receiver of its sightings
    /// (`hci0`, `h4:/tmp/bt-server-le`, `serial:/dev/ttyACM0`).
    var name: String { get }
    /// Packets from the controller, stamped on arrival. The stream finishes with an error when
    /// the link breaks or the controller goes away, and without one after `close()`.
    var incoming: AsyncThrowingStream<TimestampedPacket, any Error> { get }
    /// Sends one packet, returning once the link has taken it; throws when the link is broken
    /// or the controller stops reading.
    func send(_ packet: HCIPacket) async throws
    /// Stops reading and releases the link. Safe to call more than once.
    func close()
    /// True when the kernel's Bluetooth stack owns the controller too (an HCI raw channel):
    /// then the host must not reset it or change its event masks.
    var isSharedWithKernel: Bool { get }
}

extension HCITransport {
    public var isSharedWithKernel: Bool { false }
}

/// Why a transport could not be opened or stopped working.
public struct HCITransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public var transport: String
    public var message: String

    public init(transport: String, message: String) {
        self.transport = transport
        self.message = message
    }

    public var description: String { "\(transport): \(message)" }
}
