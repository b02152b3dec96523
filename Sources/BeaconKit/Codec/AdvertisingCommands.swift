/// The parameter bytes of the three LE commands that make a controller advertise, written once
/// for the HCI host controller (`LECommand`), `proxima encode --hcitool` and the server's bulk
/// configuration (Core Specification v5.4, Vol 4, Part E, 7.8.5–7.8.9).
public enum AdvertisingCommands {
    /// OGF 0x08, the LE controller commands.
    public static let groupField: UInt8 = 0x08
    /// OCF 0x0006, LE Set Advertising Parameters.
    public static let setParametersCommandField: UInt16 = 0x0006
    /// OCF 0x0008, LE Set Advertising Data.
    public static let setDataCommandField: UInt16 = 0x0008
    /// OCF 0x000A, LE Set Advertising Enable.
    public static let setEnableCommandField: UInt16 = 0x000A

    /// 0x00A0 × 0.625 ms = 100 ms, the interval an iBeacon advertises at.
    public static let iBeaconIntervalUnits: UInt16 = 0x00A0
    /// Advertising_Type 0x03, ADV_NONCONN_IND: non-connectable undirected.
    public static let nonConnectableUndirected: UInt8 = 0x03
    /// The most legacy advertising data a controller takes.
    public static let maximumDataLength = 31

    /// LE Set Advertising Parameters (7.8.5): interval min and max, type, public own address,
    /// no peer, all three channels (map 0x07: 37, 38, 39), no filter.
    public static func setParameters(intervalUnits: UInt16 = iBeaconIntervalUnits,
                                     type: UInt8 = nonConnectableUndirected) -> [UInt8] {
        let interval = [UInt8(truncatingIfNeeded: intervalUnits), UInt8(truncatingIfNeeded: intervalUnits >> 8)]
        return interval + interval + [type, 0x00, 0x00] + [UInt8](repeating: 0, count: 6) + [0x07, 0x00]
    }

    /// LE Set Advertising Data (7.8.7): the significant length, then 31 bytes of data padded with
    /// zeros. Callers keep `data` within `maximumDataLength`.
    public static func setData(_ data: [UInt8]) -> [UInt8] {
        [UInt8(data.count)] + data + [UInt8](repeating: 0, count: max(0, maximumDataLength - data.count))
    }

    /// LE Set Advertising Enable (7.8.9).
    public static func setEnable(_ enabled: Bool) -> [UInt8] { [enabled ? 1 : 0] }

    /// The Raspberry Pi recipe as `hcitool` command lines: set the data, the parameters (100 ms,
    /// non-connectable) and enable. `device` is quoted, so any text stays one shell word.
    public static func hcitoolRecipe(advertisingData: [UInt8], device: String = "hci0") -> [String] {
        func command(_ commandField: UInt16, _ parameters: [UInt8]) -> String {
            "hcitool -i \(ShellQuoting.word(device)) cmd 0x\(Hex.string([groupField])) "
                + "0x\(Hex.string([UInt8(commandField >> 8), UInt8(truncatingIfNeeded: commandField)])) "
                + Hex.string(parameters, separator: " ")
        }
        return [
            command(setDataCommandField, setData(advertisingData)),
            command(setParametersCommandField, setParameters()),
            command(setEnableCommandField, setEnable(true)),
        ]
    }
}
