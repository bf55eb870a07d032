import AklocCore
import AklocProtocol

/// A track point as one journal record: comma-separated text, fixed field
/// order, an empty field for an unknown value. Text (not JSON) because an
/// export of a million points parses every record, and this is several
/// times cheaper to read while still greppable by a person:
///
///     1,3,1764517000.250000000,1764517000.000000000,52.5163,13.3777,34.5,,4.2,,1.25,,87.5,,,3,/dev/ttyACM0
///
/// version 1, segment, receivedAt, timestamp, latitude, longitude,
/// altitude, ellipsoidalAltitude, horizontalAccuracy, verticalAccuracy,
/// speed, speedAccuracy, course, courseAccuracy, climb, mode (2 or 3),
/// device (the rest of the record).
///
/// Version 2 (a point that knows its fix quality) adds, before the device,
/// fix status (gpsd's number), satellites used and HDOP:
///
///     2,3,1764517000.250000000,1764517000.000000000,52.5163,13.3777,34.5,,4.2,,1.25,,87.5,,,3,2,11,0.9,/dev/ttyACM0
///
/// A point without them is still written as version 1, so journals written
/// before stay byte for byte what they were, and both versions are read.
public enum TrackRecord {
    static let fieldCount = 17
    static let fieldCountV2 = 20

    /// The first record of every day file: `h,<64-bit id in hex>`, a random
    /// name for this incarnation of the file, so a cursor into a file that
    /// was cleared and written again (even with the same inode) is refused.
    public static func header(id: UInt64) -> [UInt8] {
        Array("h,\(String(id, radix: 16))".utf8)
    }

    /// The id of a header record; nil for any other record.
    public static func headerID<Bytes: Collection<UInt8>>(_ record: Bytes) -> UInt64? {
        guard record.count > 2, record.first == UInt8(ascii: "h"), record.dropFirst().first == 0x2C else { return nil }
        return UInt64(String(decoding: record.dropFirst(2), as: UTF8.self), radix: 16)
    }

    public static func encode(_ point: TrackPoint) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        let location = point.location
        let version2 = location.fixStatus != nil || location.satellitesUsed != nil || location.hdop != nil
        bytes += (version2 ? "2," : "1,").utf8
        bytes += String(point.segment).utf8
        bytes.append(0x2C)
        time(location.receivedAt, into: &bytes)
        bytes.append(0x2C)
        time(location.timestamp, into: &bytes)
        for value in [
            location.latitude, location.longitude, location.altitude, location.ellipsoidalAltitude,
            location.horizontalAccuracy, location.verticalAccuracy, location.speed, location.speedAccuracy,
            location.course, location.courseAccuracy, location.climb,
        ] as [Double?] {
            bytes.append(0x2C)
            if let value, value.isFinite { bytes += value.description.utf8 }
        }
        bytes += (location.mode == .threeD ? ",3," : ",2,").utf8
        if version2 {
            if let status = location.fixStatus { bytes += String(status.gpsdValue).utf8 }
            bytes.append(0x2C)
            if let used = location.satellitesUsed { bytes += String(used).utf8 }
            bytes.append(0x2C)
            if let hdop = location.hdop, hdop.isFinite { bytes += hdop.description.utf8 }
            bytes.append(0x2C)
        }
        if let device = location.device, !device.utf8.contains(0x0A) { bytes += device.utf8 }
        return bytes
    }

    /// The point a record holds; nil for any record not of this form (a
    /// newer version, or bytes that passed the checksum but not the form).
    public static func decode<Bytes: Collection<UInt8>>(_ record: Bytes) -> TrackPoint? where Bytes.Index == Int {
        let version2 = record.first == UInt8(ascii: "2")
        let count = version2 ? fieldCountV2 : fieldCount
        var fields: [Range<Int>] = []
        fields.reserveCapacity(count)
        var start = record.startIndex
        var index = record.startIndex
        while index < record.endIndex, fields.count < count - 1 {
            if record[index] == 0x2C {
                fields.append(start..<index)
                start = index + 1
            }
            index += 1
        }
        fields.append(start..<record.endIndex)
        guard fields.count == count, record[fields[0]].elementsEqual((version2 ? "2" : "1").utf8),
            let segment = integer(record[fields[1]]), segment >= 0
        else { return nil }
        func number(_ field: Int) -> Double?? {
            let range = fields[field]
            if range.isEmpty { return .some(nil) }
            guard let value = Double(String(decoding: record[range], as: UTF8.self)), value.isFinite else {
                return nil
            }
            return .some(value)
        }
        guard let receivedAt = time(record[fields[2]]), let timestamp = time(record[fields[3]]),
            let latitude = number(4), let latitude, let longitude = number(5), let longitude,
            (-90...90).contains(latitude), (-180...180).contains(longitude),
            let altitude = number(6), let ellipsoidal = number(7), let eph = number(8), let epv = number(9),
            let speed = number(10), let eps = number(11), let course = number(12), let epd = number(13),
            let climb = number(14)
        else { return nil }
        let mode: Location.Mode
        switch Array(record[fields[15]]) {
        case [0x33]: mode = .threeD
        case [0x32]: mode = .twoD
        default: return nil
        }
        var fixStatus: FixStatus?
        var satellitesUsed: Int?
        var hdop: Double?
        if version2 {
            if !fields[16].isEmpty {
                guard let status = integer(record[fields[16]]).flatMap({ FixStatus(gpsd: Int($0)) }) else { return nil }
                fixStatus = status
            }
            if !fields[17].isEmpty {
                guard let used = integer(record[fields[17]]), (0...1000).contains(used) else { return nil }
                satellitesUsed = Int(used)
            }
            guard let value = number(18), value.map({ $0 >= 0 }) ?? true else { return nil }
            hdop = value
        }
        let deviceField = fields[count - 1]
        let device = deviceField.isEmpty ? nil : String(decoding: record[deviceField], as: UTF8.self)
        return TrackPoint(
            location: Location(
                latitude: latitude, longitude: longitude, mode: mode, altitude: altitude,
                ellipsoidalAltitude: ellipsoidal, horizontalAccuracy: eph, verticalAccuracy: epv, speed: speed,
                speedAccuracy: eps, course: course, courseAccuracy: epd, climb: climb, timestamp: timestamp,
                receivedAt: receivedAt, device: device, fixStatus: fixStatus, satellitesUsed: satellitesUsed,
                hdop: hdop),
            segment: UInt64(segment))
    }

    /// `seconds.nanoseconds` (9 digits); empty for nil.
    private static func time(_ time: FixTime?, into bytes: inout [UInt8]) {
        guard let time else { return }
        bytes += String(time.secondsSince1970).utf8
        bytes.append(0x2E)
        let nanos = String(max(0, min(999_999_999, time.nanoseconds)))
        bytes += repeatElement(UInt8(ascii: "0"), count: 9 - nanos.utf8.count)
        bytes += nanos.utf8
    }

    /// `.some(nil)` for an empty field, nil for a malformed one.
    private static func time<Bytes: Collection<UInt8>>(_ field: Bytes) -> FixTime?? {
        if field.isEmpty { return .some(nil) }
        guard let dot = field.firstIndex(of: 0x2E), let seconds = integer(field[..<dot]),
            field.distance(from: dot, to: field.endIndex) == 10, let nanos = integer(field[field.index(after: dot)...])
        else { return nil }
        return .some(FixTime(secondsSince1970: seconds, nanoseconds: Int32(nanos)))
    }

    private static func integer<Bytes: Collection<UInt8>>(_ field: Bytes) -> Int64? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value: Int64 = 0
        var negative = false
        for (offset, byte) in field.enumerated() {
            if offset == 0, byte == 0x2D, field.count > 1 {
                negative = true
                continue
            }
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return negative ? -value : value
    }
}
