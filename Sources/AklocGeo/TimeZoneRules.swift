import AklocCore

/// One zone's offsets and abbreviations, parsed from a TZif file (RFC 8536;
/// Debian tzdata's /usr/share/zoneinfo/AREA/CITY). The shell reads or maps
/// the file; this only takes its bytes. Versions 1 to 4: the 64-bit block
/// when there is one, and the footer's POSIX TZ rule past the last
/// transition (tzdata's "slim" files stop their transitions where the rule
/// takes over).
public struct TimeZoneRules: Hashable, Sendable {
    /// The local time in force at an instant.
    public struct LocalTime: Hashable, Sendable {
        public var secondsFromGMT: Int
        public var abbreviation: String
        public var isDaylightSavingTime: Bool

        public init(secondsFromGMT: Int, abbreviation: String, isDaylightSavingTime: Bool) {
            self.secondsFromGMT = secondsFromGMT
            self.abbreviation = abbreviation
            self.isDaylightSavingTime = isDaylightSavingTime
        }
    }

    /// A zone file is a few kilobytes; anything this large is not one.
    public static let maximumSize = 1 << 20

    /// Transition instants (Unix seconds, ascending) and the type after each.
    public let transitions: [Int64]
    let transitionTypes: [Int]
    let types: [LocalTime]
    /// The footer rule, for instants after the last transition.
    public let footer: PosixTimeZoneRule?

    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        guard bytes.count <= Self.maximumSize else {
            throw GeoDataReader.Error(.corrupt, "\(bytes.count) bytes is too large for a TZif file")
        }
        let reader = GeoDataReader(bytes)
        guard bytes.count >= 44, try reader.string(at: 0, length: 4) == "TZif" else {
            throw GeoDataReader.Error(.badMagic, "not a TZif file")
        }
        let version = try reader.uint8(at: 4)
        guard version == 0 || (version >= UInt8(ascii: "2") && version <= UInt8(ascii: "4")) else {
            throw GeoDataReader.Error(.badVersion, "TZif version byte \(version)")
        }
        var block = try Block(reader, at: 0, timeSize: 4)
        if version != 0 {
            // The v1 block is for old readers; the 64-bit one follows it.
            let second = block.end
            guard try reader.string(at: second, length: 4) == "TZif" else {
                throw GeoDataReader.Error(.corrupt, "no second TZif header at \(second)")
            }
            block = try Block(reader, at: second, timeSize: 8)
            footer = try Self.footer(reader, at: block.end)
        } else {
            footer = nil
        }
        transitions = block.transitions
        transitionTypes = block.transitionTypes
        types = block.types
    }

    /// The local time at `unixSeconds`.
    public func localTime(at unixSeconds: Int64) -> LocalTime {
        if let last = transitions.last, unixSeconds >= last, let footer {
            return footer.localTime(at: unixSeconds)
        }
        if transitions.isEmpty, let footer {
            return footer.localTime(at: unixSeconds)
        }
        // The last transition at or before the instant; before the first,
        // RFC 8536 says type 0.
        var low = 0
        var high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= unixSeconds { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? types[0] : types[transitionTypes[low - 1]]
    }

    /// One data block: the header's counts and the arrays they size.
    private struct Block {
        var transitions: [Int64] = []
        var transitionTypes: [Int] = []
        var types: [LocalTime] = []
        var end: Int

        init(_ reader: GeoDataReader, at start: Int, timeSize: Int) throws(GeoDataReader.Error) {
            func count(_ index: Int) throws(GeoDataReader.Error) -> Int {
                Int(try reader.uint32(at: start + 20 + index * 4).byteSwapped)
            }
            let isUTCCount = try count(0)
            let isStandardCount = try count(1)
            let leapCount = try count(2)
            let timeCount = try count(3)
            let typeCount = try count(4)
            let charCount = try count(5)
            guard typeCount >= 1, typeCount <= 256, isUTCCount == 0 || isUTCCount == typeCount,
                isStandardCount == 0 || isStandardCount == typeCount, timeCount <= reader.count,
                charCount <= reader.count, leapCount <= reader.count
            else {
                throw GeoDataReader.Error(.corrupt, "TZif counts out of range at \(start)")
            }
            var at = start + 44
            let typeIndexAt = at + timeCount * timeSize
            let typesAt = typeIndexAt + timeCount
            let charsAt = typesAt + typeCount * 6
            end = charsAt + charCount + leapCount * (timeSize + 4) + isStandardCount + isUTCCount
            guard end <= reader.count else {
                throw GeoDataReader.Error(.truncated, "TZif data block ends at \(end), past \(reader.count)")
            }
            transitions.reserveCapacity(timeCount)
            for _ in 0..<timeCount {
                if timeSize == 8 {
                    let high = UInt64(try reader.uint32(at: at).byteSwapped)
                    let low = UInt64(try reader.uint32(at: at + 4).byteSwapped)
                    transitions.append(Int64(bitPattern: high << 32 | low))
                } else {
                    transitions.append(Int64(Int32(bitPattern: try reader.uint32(at: at).byteSwapped)))
                }
                at += timeSize
            }
            for index in 0..<timeCount {
                let type = Int(try reader.uint8(at: typeIndexAt + index))
                guard type < typeCount else { throw GeoDataReader.Error(.corrupt, "transition to type \(type)") }
                guard index == 0 || transitions[index - 1] < transitions[index] else {
                    throw GeoDataReader.Error(.corrupt, "TZif transitions out of order at \(index)")
                }
                transitionTypes.append(type)
            }
            let chars = try reader.slice(at: charsAt, length: charCount)
            for index in 0..<typeCount {
                let entry = typesAt + index * 6
                let offset = Int(Int32(bitPattern: try reader.uint32(at: entry).byteSwapped))
                let isDST = try reader.uint8(at: entry + 4) != 0
                let abbreviationIndex = Int(try reader.uint8(at: entry + 5))
                guard abbreviationIndex < charCount, offset > -90_000, offset < 90_000 else {
                    throw GeoDataReader.Error(.corrupt, "TZif type \(index): offset \(offset)")
                }
                let tail = chars[abbreviationIndex...]
                let nul = tail.firstIndex(of: 0) ?? chars.endIndex
                let abbreviation = String(decoding: chars[abbreviationIndex..<nul], as: UTF8.self)
                types.append(LocalTime(secondsFromGMT: offset, abbreviation: abbreviation, isDaylightSavingTime: isDST))
            }
        }
    }

    /// The footer: a newline, a POSIX TZ string, a newline. Empty means none.
    private static func footer(_ reader: GeoDataReader, at start: Int) throws(GeoDataReader.Error) -> PosixTimeZoneRule?
    {
        guard try reader.uint8(at: start) == 0x0A else {
            throw GeoDataReader.Error(.corrupt, "TZif footer does not start with a newline")
        }
        var end = start + 1
        while try reader.uint8(at: end) != 0x0A {
            end += 1
            guard end - start <= 256 else { throw GeoDataReader.Error(.corrupt, "TZif footer longer than 256") }
        }
        guard end > start + 1 else { return nil }
        let text = try reader.string(at: start + 1, length: end - start - 1)
        guard let rule = PosixTimeZoneRule(text) else {
            throw GeoDataReader.Error(.corrupt, "TZif footer \(text.debugDescription) is not a POSIX TZ rule")
        }
        return rule
    }
}
