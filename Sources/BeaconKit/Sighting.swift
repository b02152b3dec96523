/// One received beacon packet: the single input of the engine, whatever the source.
public struct Sighting: Sendable, Hashable {
    /// Seconds on the source's clock (wall-clock epoch seconds for live sources, simulated
    /// seconds for the simulator). The engine only compares and subtracts times.
    public var time: Double
    /// Which receiver heard it: a controller name, a gateway id, a simulated receiver.
    public var receiver: String
    public var address: BluetoothAddress
    /// Received signal strength in dBm, or nil when the controller did not measure it
    /// (HCI reports 127 for "not available").
    public var rssi: Int8?
    public var frame: BeaconFrame

    public init(time: Double, receiver: String, address: BluetoothAddress, rssi: Int8?, frame: BeaconFrame) {
        self.time = time
        self.receiver = receiver
        self.address = address
        self.rssi = rssi
        self.frame = frame
    }
}
