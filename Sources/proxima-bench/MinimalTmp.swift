extension CodecBenchmark {
    static func minimalSwift(_ buffer: UnsafeRawBufferPointer) -> Totals {
        var totals = Totals()
        var position = 0
        let length = buffer.count
        while position + 3 <= length {
            let parameters = Int(buffer[position + 2])
            let start = position + 3, end = start + parameters
            if end > length || buffer[start] != 0x02 { return totals }
            let count = Int(buffer[start + 1])
            var cursor = start + 2
            for _ in 0..<count {
                if cursor + 10 > end { return totals }
                let dataLength = Int(buffer[cursor + 8])
                if cursor + 10 + dataLength > end { return totals }
                let rssi = Int8(bitPattern: buffer[cursor + 9 + dataLength])
                var p = cursor + 9
                let adEnd = p + dataLength
                while p < adEnd {
                    let s = Int(buffer[p])
                    if s == 0 || s > adEnd - p - 1 { break }
                    let type = buffer[p + 1]
                    let v = p + 2
                    if type == 0xFF && s - 1 >= 25 && buffer[v] == 0x4C && buffer[v + 1] == 0 && buffer[v + 2] == 2 && buffer[v + 3] == 0x15 {
                        let major = UInt16(buffer[v + 20]) << 8 | UInt16(buffer[v + 21])
                        let minor = UInt16(buffer[v + 22]) << 8 | UInt16(buffer[v + 23])
                        let power = Int8(bitPattern: buffer[v + 24])
                        totals.iBeacons += 1
                        totals.checksum &+= UInt64(major) &+ UInt64(minor) &+ UInt64(bitPattern: Int64(power)) &+ UInt64(bitPattern: Int64(rssi)) &+ UInt64(buffer[v + 4])
                    } else if type == 0x16 && s - 1 >= 3 && buffer[v] == 0xAA && buffer[v + 1] == 0xFE {
                        totals.eddystone += 1
                    }
                    p += s + 1
                }
                cursor += 10 + dataLength
            }
            position = end
        }
        return totals
    }
}
