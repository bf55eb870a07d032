import AklocGeo
import Testing

@Suite struct GeoDataReaderTests {
    @Test func readsLittleEndianAndRefusesReadsPastTheEnd() {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0xFF]
        bytes.withUnsafeBytes { raw in
            let reader = GeoDataReader(raw)
            #expect((try? reader.uint16(at: 0)) == 0x0201)
            #expect((try? reader.uint32(at: 0)) == 0x0403_0201)
            #expect((try? reader.uint8(at: 4)) == 0xFF)
            #expect((try? reader.string(at: 0, length: 0)) == "")
            #expect(throws: GeoDataReader.Error.self) { try reader.uint32(at: 2) }
            #expect(throws: GeoDataReader.Error.self) { try reader.uint8(at: -1) }
            #expect(throws: GeoDataReader.Error.self) { try reader.string(at: 4, length: Int.max) }
        }
    }
}
