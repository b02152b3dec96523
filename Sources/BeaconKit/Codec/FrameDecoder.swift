/// The byte-level decoders behind every public decoding entry point. They work on raw buffers
/// and allocate nothing for iBeacon, AltBeacon-free and Eddystone-TLM traffic, so that a scanner
/// keeps up with a busy channel. Offsets in errors are `baseOffset` plus the buffer position.
enum FrameDecoder {
    /// Every beacon frame in a chain of AD structures.
    @inline(__always)
    static func frames(inAdvertisingData buffer: UnsafeRawBufferPointer, baseOffset: Int,
                       _ body: (BeaconFrame) -> Void) throws(DecodeError) {
        try ADChain.walk(buffer, baseOffset: baseOffset) { (type, range) throws(DecodeError) in
            switch type {
            case .manufacturerSpecificData:
                try frames(inManufacturerData: buffer, range, baseOffset: baseOffset, body)
            case .serviceData16:
                if let frame = try eddystone(inServiceData: buffer, range, baseOffset: baseOffset) {
                    body(.eddystone(frame))
                }
            default:
                break
            }
        }
    }

    /// Beacon frames in one manufacturer-specific value (company id first).
    @inline(__always)
    static func frames(inManufacturerData buffer: UnsafeRawBufferPointer, _ range: Range<Int>, baseOffset: Int,
                       _ body: (BeaconFrame) -> Void) throws(DecodeError) {
        let start = range.lowerBound
        guard range.count >= 2 else {
            throw DecodeError(field: "manufacturer data company id", offset: baseOffset + start,
                              expected: "2 bytes", found: "\(range.count) byte\(range.count == 1 ? "" : "s")")
        }
        if let frame = altBeacon(buffer, range) {
            body(.altBeacon(frame))
            return
        }
        guard buffer.uint16LittleEndian(at: start) == CompanyIdentifier.apple.rawValue else { return }
        if let frame = try iBeacon(inAppleData: buffer, range, baseOffset: baseOffset) {
            body(.iBeacon(frame))
        }
    }

    /// Apple's manufacturer data is a run of `type length value` items; the iBeacon item is type
    /// 0x02 with length 0x15. Other Apple items (Nearby, Handoff, AirPods...) are stepped over.
    @inline(__always)
    static func iBeacon(inAppleData buffer: UnsafeRawBufferPointer, _ range: Range<Int>,
                        baseOffset: Int) throws(DecodeError) -> IBeaconFrame? {
        var position = range.lowerBound + 2
        let end = range.upperBound
        while position < end {
            let type = buffer[position]
            guard position + 1 < end else {
                if type == IBeaconFrame.typeByte {
                    throw DecodeError(field: "iBeacon length", offset: baseOffset + position + 1,
                                      expected: "\(hexByte(IBeaconFrame.payloadLength)) after type 0x02", found: "end of data")
                }
                return nil
            }
            let length = Int(buffer[position + 1])
            if type == IBeaconFrame.typeByte {
                guard length == Int(IBeaconFrame.payloadLength) else {
                    throw DecodeError(field: "iBeacon length", offset: baseOffset + position + 1,
                                      expected: "\(hexByte(IBeaconFrame.payloadLength)) (21 bytes: UUID, major, minor, power)",
                                      found: hexByte(UInt8(length)))
                }
                let payload = position + 2
                guard end - payload >= length else {
                    throw DecodeError(field: iBeaconFieldName(at: end - payload), offset: baseOffset + end,
                                      expected: "21 bytes of UUID, major, minor and power after 4C 00 02 15",
                                      found: "\(end - payload) byte\(end - payload == 1 ? "" : "s")")
                }
                let identity = BeaconIdentity(uuid: buffer.uuid(at: payload),
                                              major: buffer.uint16BigEndian(at: payload + 16),
                                              minor: buffer.uint16BigEndian(at: payload + 18))
                return IBeaconFrame(identity: identity, measuredPower: MeasuredPower(buffer.int8(at: payload + 20)))
            }
            guard end - position - 2 >= length else { return nil }
            position += 2 + length
        }
        return nil
    }

    static func iBeaconFieldName(at payloadOffset: Int) -> String {
        switch payloadOffset {
        case ..<16: "iBeacon proximity UUID"
        case 16..<18: "iBeacon major"
        case 18..<20: "iBeacon minor"
        default: "iBeacon measured power"
        }
    }

    /// AltBeacon: `<company 2> BE AC <id 20> <reference RSSI 1> <reserved 1>`, exactly 26 bytes.
    /// Any company may use it, so a value of another length is some other company's data.
    @inline(__always)
    static func altBeacon(_ buffer: UnsafeRawBufferPointer, _ range: Range<Int>) -> AltBeaconFrame? {
        let start = range.lowerBound
        guard range.count == AltBeaconFrame.manufacturerDataLength,
              buffer[start + 2] == 0xBE, buffer[start + 3] == 0xAC else { return nil }
        return AltBeaconFrame(companyID: buffer.uint16LittleEndian(at: start),
                              beaconID: buffer.bytes((start + 4)..<(start + 24)),
                              referenceRSSI: MeasuredPower(buffer.int8(at: start + 24)),
                              reserved: buffer[start + 25])
    }

    /// Eddystone frames in a 16-bit service data value (UUID 0xFEAA first).
    @inline(__always)
    static func eddystone(inServiceData buffer: UnsafeRawBufferPointer, _ range: Range<Int>,
                          baseOffset: Int) throws(DecodeError) -> EddystoneFrame? {
        let start = range.lowerBound
        guard range.count >= 2 else {
            throw DecodeError(field: "service data UUID", offset: baseOffset + start, expected: "2 bytes",
                              found: "\(range.count) byte\(range.count == 1 ? "" : "s")")
        }
        guard buffer.uint16LittleEndian(at: start) == EddystoneFrame.serviceUUID else { return nil }
        guard range.count >= 3 else {
            throw DecodeError(field: "Eddystone frame type", offset: baseOffset + start + 2,
                              expected: "a frame type byte after AA FE", found: "end of data")
        }
        let frameType = buffer[start + 2]
        let body = start + 3
        let available = range.upperBound - body
        switch frameType {
        case EddystoneFrame.uidType:
            // TX power, 10-byte namespace, 6-byte instance; the 2 reserved bytes are often omitted.
            guard available >= 17 else {
                throw DecodeError(field: "Eddystone-UID", offset: baseOffset + range.upperBound,
                                  expected: "17 bytes (TX power, namespace 10, instance 6) after the frame type",
                                  found: "\(available)")
            }
            return .uid(namespace: buffer.bytes((body + 1)..<(body + 11)),
                        instance: buffer.bytes((body + 11)..<(body + 17)),
                        txPowerAt0m: buffer.int8(at: body))
        case EddystoneFrame.urlType:
            guard available >= 2 else {
                throw DecodeError(field: "Eddystone-URL", offset: baseOffset + range.upperBound,
                                  expected: "TX power and URL scheme after the frame type", found: "\(available) byte\(available == 1 ? "" : "s")")
            }
            let url = try EddystoneURLCoding.expand(buffer, scheme: body + 1, end: range.upperBound, baseOffset: baseOffset)
            return .url(txPowerAt0m: buffer.int8(at: body), url: url)
        case EddystoneFrame.tlmType:
            guard available >= 1 else {
                throw DecodeError(field: "Eddystone-TLM version", offset: baseOffset + body,
                                  expected: "a version byte", found: "end of data")
            }
            // Version 0x01 is encrypted telemetry (eTLM), which needs the beacon's key.
            guard buffer[body] == 0x00 else { return nil }
            guard available >= 13 else {
                throw DecodeError(field: "Eddystone-TLM", offset: baseOffset + range.upperBound,
                                  expected: "13 bytes (version, battery 2, temperature 2, count 4, uptime 4) after the frame type",
                                  found: "\(available)")
            }
            let rawTemperature = buffer.uint16BigEndian(at: body + 3)
            let temperature: Double? = rawTemperature == 0x8000
                ? nil : Double(Int16(bitPattern: rawTemperature)) / 256
            return .tlm(EddystoneTelemetry(batteryMillivolts: buffer.uint16BigEndian(at: body + 1),
                                           temperatureCelsius: temperature,
                                           advertisingCount: buffer.uint32BigEndian(at: body + 5),
                                           uptimeDeciseconds: buffer.uint32BigEndian(at: body + 9)))
        default:
            // EID (0x30) and future types carry nothing Proxima reads.
            return nil
        }
    }
}
