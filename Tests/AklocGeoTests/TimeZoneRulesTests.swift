import AklocGeo
import Foundation
import Testing

@Suite struct TimeZoneRulesTests {
    /// 1990-07-01, 2026-01-15, 2026-07-15, 2045-01-15, 2045-07-15 (12:00 UTC):
    /// the last two lie past every slim file's transitions, in the footer rule.
    static let instants: [Int64] = [646_833_600, 1_768_478_400, 1_784_116_800, 2_368_094_400, 2_383_732_800]

    /// Every zone of data/timezones.bin, against Foundation's own reading of the same tzdata files.
    @Test func everyZoneMatchesFoundationsOffsets() throws {
        var checked = 0
        for identifier in BorderData.zones.index.names {
            let rules = try #require(ZoneFiles.rules(identifier), "\(identifier)")
            let zone = Foundation.TimeZone(identifier: identifier)
            let reference = try #require(zone, "\(identifier)")
            for instant in Self.instants {
                let date = Date(timeIntervalSince1970: TimeInterval(instant))
                let local = rules.localTime(at: instant)
                #expect(local.secondsFromGMT == reference.secondsFromGMT(for: date), "\(identifier) at \(instant)")
                // tzdata's negative daylight time (Dublin's winter GMT, Morocco's
                // Ramadan hour) is flagged as daylight time in the file, which
                // Foundation reports the other way round; the offsets agree.
                if !["Europe/Dublin", "Africa/Casablanca", "Africa/El_Aaiun"].contains(identifier) {
                    #expect(
                        local.isDaylightSavingTime == reference.isDaylightSavingTime(for: date),
                        "\(identifier) at \(instant)")
                }
                checked += 1
            }
        }
        #expect(checked == BorderData.zones.index.names.count * Self.instants.count)
    }

    @Test func abbreviationsAndOffsetsOfKnownZones() throws {
        let amsterdam = try #require(ZoneFiles.rules("Europe/Amsterdam"))
        #expect(
            TimeZoneInfo(identifier: "Europe/Amsterdam", rules: amsterdam, at: Self.instants[1])
                == TimeZoneInfo(
                    identifier: "Europe/Amsterdam", abbreviation: "CET", secondsFromGMT: 3600,
                    isDaylightSavingTime: false))
        #expect(amsterdam.localTime(at: Self.instants[4]).abbreviation == "CEST")
        let tehran = try #require(ZoneFiles.rules("Asia/Tehran"))
        #expect(
            tehran.localTime(at: Self.instants[2])
                == .init(secondsFromGMT: 12_600, abbreviation: "+0330", isDaylightSavingTime: false))
        let sydney = try #require(ZoneFiles.rules("Australia/Sydney"))
        #expect(sydney.localTime(at: Self.instants[3]).abbreviation == "AEDT")
        #expect(sydney.localTime(at: Self.instants[4]).secondsFromGMT == 36_000)
        let kolkata = try #require(ZoneFiles.rules("Asia/Kolkata"))
        #expect(kolkata.localTime(at: Self.instants[0]).abbreviation == "IST")
        #expect(TimeZoneInfo.relativePath(of: "../../etc/passwd") == nil)
        #expect(TimeZoneInfo.relativePath(of: "/etc/passwd") == nil)
        #expect(TimeZoneInfo.relativePath(of: "Etc/GMT+5") == "Etc/GMT+5")
    }

    @Test func posixRulesAroundTheirTransitions() throws {
        let europe = try #require(PosixTimeZoneRule("CET-1CEST,M3.5.0,M10.5.0/3"))
        // 2026: last Sunday of March is the 29th, 01:00 UTC; of October the 25th, 01:00 UTC.
        let start: Int64 = 1_774_746_000
        let end: Int64 = 1_792_890_000
        #expect(europe.localTime(at: start - 1).secondsFromGMT == 3600)
        #expect(europe.localTime(at: start).secondsFromGMT == 7200)
        #expect(europe.localTime(at: end - 1).abbreviation == "CEST")
        #expect(europe.localTime(at: end).abbreviation == "CET")
        // Southern hemisphere, spanning New Year: AEDT ends 2026-04-05 03:00 local (16:00 UTC the 4th).
        let sydney = try #require(PosixTimeZoneRule("AEST-10AEDT,M10.1.0,M4.1.0/3"))
        #expect(sydney.localTime(at: 1_775_318_400 - 1).abbreviation == "AEDT")
        #expect(sydney.localTime(at: 1_775_318_400).abbreviation == "AEST")
        #expect(sydney.localTime(at: 1_767_225_600).abbreviation == "AEDT")  // 2026-01-01
        #expect(PosixTimeZoneRule("<+0330>-3:30")?.standard.secondsFromGMT == 12_600)
        #expect(PosixTimeZoneRule("EST5EDT,M3.2.0,M11.1.0")?.daylight?.secondsFromGMT == -14_400)
        #expect(PosixTimeZoneRule("<-02>2<-01>,M3.5.0/-1,M10.5.0/0") != nil)  // America/Nuuk's negative time
        #expect(PosixTimeZoneRule("XXX3YYY,J60/2,300/25")?.start == .init(day: .julian(60), time: 7200))
        for bad in [
            "", "C-1", "CET", "CET-25", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0", "CET-1CEST,M3.5.7,M10.5.0",
            "<+03", "CET-1CEST,J0,J100", "CET-1:60", "CET-1CEST,M3.5.0/200,M10.5.0", "CET-1 ",
        ] {
            #expect(PosixTimeZoneRule(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func damagedZoneFilesAreErrors() throws {
        let file = try #require(FileManager.default.contents(atPath: "/usr/share/zoneinfo/Europe/Amsterdam"))
        for cut in [0, 4, 43, 44, 60, file.count / 2, file.count - 2, file.count - 1] {
            _ = file.prefix(cut).withUnsafeBytes { raw in
                #expect(throws: GeoDataReader.Error.self, "cut at \(cut)") { try TimeZoneRules(raw) }
            }
        }
        var version = Array(file)
        version[4] = UInt8(ascii: "9")
        var counts = Array(file)
        counts.replaceSubrange(32..<36, with: [0x7F, 0xFF, 0xFF, 0xFF])  // timecnt
        var types = Array(file)
        types.replaceSubrange(36..<40, with: [0, 0, 0, 0])  // typecnt 0
        for (name, bytes) in [
            ("version", version), ("counts", counts), ("types", types),
            ("oversize", [UInt8](repeating: 0, count: TimeZoneRules.maximumSize + 1)),
            ("text", Array("not a zone".utf8)),
        ] {
            _ = bytes.withUnsafeBytes { raw in
                #expect(throws: GeoDataReader.Error.self, "\(name)") { try TimeZoneRules(raw) }
            }
        }
        // Random damage: parse or throw, never crash.
        var random = BorderData.Random(state: 3)
        for _ in 0..<300 {
            var damaged = Array(file)
            for _ in 0..<8 {
                damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            damaged.withUnsafeBytes { raw in
                if let rules = try? TimeZoneRules(raw) { _ = rules.localTime(at: Self.instants[2]) }
            }
        }
    }
}
