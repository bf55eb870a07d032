/// CRC-32C (Castagnoli), the checksum of ext4 metadata, iSCSI and
/// LevelDB's log: it catches every burst error up to 32 bits, so a torn or
/// bit-flipped journal record is never taken for data.
public enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1 }
        return value
    }

    public static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8) }
        }
        return ~crc
    }
}
