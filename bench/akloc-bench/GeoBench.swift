import AklocGeo
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench geo [--out FILE] [--command CMD] [DATA_DIR]`: the geo
/// lookups' times (DESIGN §7: reverseGeocode, searchPlaces, country and time
/// zone of a point, p50/p99) and the resident pages of the data files they
/// touch, mapped as aklocd maps them (read-only, MADV_RANDOM so the kernel
/// maps only the faulted page, no fault-around). With `--out`, the geo
/// section of that file (between its markers) is replaced.
enum GeoBench {
    static let begin = "<!-- akloc-bench geo: begin -->"
    static let end = "<!-- akloc-bench geo: end -->"
    /// Timed rounds per lookup; the report gives the median round's p50 and p99.
    static let rounds = 5

    /// One data file, mapped.
    struct Mapping {
        var path: String
        var base: UnsafeMutableRawPointer
        var size: Int
        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }

        init(_ path: String) {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { GeoBench.fail("cannot open \(path)") }
            var info = stat()
            guard fstat(fd, &info) == 0 else { GeoBench.fail("cannot stat \(path)") }
            size = Int(info.st_size)
            guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
                GeoBench.fail("cannot map \(path)")
            }
            close(fd)
            self.path = path
            self.base = base
            _ = madvise(base, size, MADV_RANDOM)
        }

        /// Drops the mapping's pages from this process and the file's clean
        /// pages from the page cache, so the next lookups show what they
        /// touch: the kernel then reads and maps small folios (64 KiB here)
        /// rather than the 2 MiB ones a file read whole ends up in.
        func dropPages() {
            munmap(base, size)
            let fd = open(path, O_RDONLY)
            _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            let again = mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0)
            close(fd)
            guard again == base else { GeoBench.fail("cannot remap \(path)") }
            _ = madvise(base, size, MADV_RANDOM)
        }
    }

    struct Row {
        var name: String
        var count: Int
        var p50: Double
        var p99: Double
        /// The p99 of the thread's CPU time per lookup.
        var cpuP99: Double
        var target: String
    }

    static func main(arguments: [String]) -> Never {
        var output: String?
        var command = "akloc-bench geo"
        var dataDir = Options.packageRoot + "/data"
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--out":
                guard let value = rest.popFirst() else { fail("--out needs a file") }
                output = value
            case "--command":
                guard let value = rest.popFirst() else { fail("--command needs a text") }
                command = value
            default: dataDir = argument
            }
        }
        let placesFile = Mapping(dataDir + "/places.bin")
        let bordersFile = Mapping(dataDir + "/borders.bin")
        let zonesFile = Mapping(dataDir + "/timezones.bin")
        let files = [placesFile, bordersFile, zonesFile]
        let zoneCountries = (try? Data(contentsOf: URL(fileURLWithPath: dataDir + "/zone-countries.tsv"))) ?? Data()
        let zoneCountriesBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: zoneCountries.count, alignment: 8)
        _ = zoneCountries.copyBytes(to: zoneCountriesBytes.bindMemory(to: UInt8.self))
        for file in files { file.dropPages() }
        let gazetteer: Gazetteer
        let zones: TimeZoneBorders
        let borders: CountryBorders
        do {
            gazetteer = try Gazetteer(placesFile.bytes)
            zones = try TimeZoneBorders(zonesFile.bytes)
            borders = try CountryBorders(
                bordersFile.bytes, zones: zones, zoneCountries: UnsafeRawBufferPointer(zoneCountriesBytes))
        } catch { fail("\(dataDir): \(error)") }
        // The daemon's composition (GeoLookups.describe): country, zone,
        // the nearest place in that country, the zone's offset now; tzdata's
        // files parsed once each, as GeoService keeps them.
        let lookups: GeoLookups
        do {
            let iso = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/iso-codes/json/iso_3166-1.json"))
            let calling = try Data(contentsOf: URL(fileURLWithPath: dataDir + "/calling-codes.tsv"))
            let entries = try iso.withUnsafeBytes { try CountryTable.Entry.iso3166(json: $0) }
            let countries = try calling.withUnsafeBytes { try CountryTable(entries: entries, callingCodes: $0) }
            lookups = GeoLookups(gazetteer: gazetteer, borders: borders, zones: zones, countries: countries)
        } catch { fail("country table: \(error)") }
        var rules: [String: TimeZoneRules?] = [:]
        func zoneRules(_ identifier: String) -> TimeZoneRules? {
            if let cached = rules[identifier] { return cached }
            let parsed = TimeZoneInfo.relativePath(of: identifier)
                .flatMap { FileManager.default.contents(atPath: "/usr/share/zoneinfo/" + $0) }
                .flatMap { data in data.withUnsafeBytes { try? TimeZoneRules($0) } }
            rules[identifier] = parsed
            return parsed
        }
        let now = Int64(Date().timeIntervalSince1970)
        func reverseGeocode(_ point: Coordinate) {
            _ = try? lookups.describe(point, at: now, rules: zoneRules)
        }
        func resident() -> [Int] { files.map { residentKiB($0.base) } }
        var memory: [(String, [Int])] = [("after opening the three files", resident())]

        var random = SystemRandomNumberGenerator()
        let track = loadPoints(Options.packageRoot + "/Tests/Fixtures/geo/ijsselmeer-track.csv", column: 0)
        reverseGeocode(track[0])
        memory.append(("after one reverseGeocode", resident()))
        for point in track { reverseGeocode(point) }
        memory.append(("after the IJsselmeer boat track (\(track.count) fixes)", resident()))

        // Points within about 5 km of real places (where people are), every
        // reference airport (coasts and borders), and points uniform on the sphere.
        let anchors = (0..<1000).map { _ in try! gazetteer.place(at: Int.random(in: 0..<gazetteer.count)) }
        let nearPlaces = (0..<10_000).map { i -> Coordinate in
            let a = anchors[i % anchors.count].coordinate
            return Coordinate(
                latitude: max(-90, min(90, a.latitude + Double.random(in: -0.05...0.05, using: &random))),
                longitude: max(-180, min(180, a.longitude + Double.random(in: -0.05...0.05, using: &random))))
        }
        let airports = loadPoints(Options.packageRoot + "/Tests/Fixtures/geo/airports-icao.csv", column: 1)
        let uniform = (0..<10_000).map { _ -> Coordinate in
            let z = Double.random(in: -1...1, using: &random)
            return Coordinate(latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180..<180, using: &random))
        }
        let borderPoints = airports + uniform
        let queries = (0..<2000).map { i -> (String, Coordinate) in
            let anchor = anchors[i % anchors.count]
            return (
                String(TextFolding.fold(anchor.name).prefix(Int.random(in: 3...6, using: &random))), anchor.coordinate
            )
        }
        let oneLetter = (0..<200).map { _ in (["s", "a", "m"].randomElement()!, uniform.randomElement()!) }

        var rows: [Row] = []
        rows.append(
            measure(
                "reverseGeocode (country, zone, nearest place in the country, offset), near places", nearPlaces,
                "≤ 20 µs",
                reverseGeocode))
        rows.append(measure("reverseGeocode, uniform on the sphere", uniform, "≤ 20 µs", reverseGeocode))
        rows.append(
            measure("placemark alone (nearest place), near places", nearPlaces, "") {
                _ = try? gazetteer.placemark(at: $0)
            })
        // The parts of the uniform reverseGeocode, to see which one its tail is.
        rows.append(
            measure("  its country alone, uniform", uniform, "") { _ = try? borders.country(at: $0) })
        rows.append(
            measure("  its nearest place in the country alone, uniform", uniform, "") { point in
                let code = (try? borders.country(at: point))??.code
                _ = try? gazetteer.placemark(at: point, country: code.map { ($0, nil) })
            })
        rows.append(
            measure("country of a point (airports + uniform)", borderPoints, "≤ 20 µs") {
                _ = try? borders.country(at: $0)
            })
        rows.append(
            measure("time zone of a point (airports + uniform)", borderPoints, "≤ 20 µs") {
                _ = try? zones.zone(at: $0)
            })
        rows.append(
            measure("searchPlaces, 3–6 letters, within 10 km", queries, "≤ 1 ms") {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 10_000, limit: 10)
            })
        rows.append(
            measure("searchPlaces, 3–6 letters, anywhere", queries, "≤ 1 ms") {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 0, limit: 10)
            })
        rows.append(
            measure("searchPlaces, 1 letter, anywhere (worst case)", oneLetter, "") {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 0, limit: 10)
            })
        // The `countries` op's name search: prefixes of every country's
        // name (1 to 6 letters, as a user types), codes, later words, misses;
        // with the German catalog, German names.
        let names = lookups.countries.countries.map(\.name)
        var countryQueries = ["gb", "GBR", "us", "neth", "united k", "kingdom", "ivoire", "curacao", "CÔTE", "zzzz"]
        for (i, name) in names.enumerated() { countryQueries.append(String(name.prefix(1 + i % 6))) }
        rows.append(
            measure("countries(matching:), \(countryQueries.count) name and code queries", countryQueries, "") {
                _ = try? lookups.countries.countries(matching: $0)
            })
        if let catalogBytes = FileManager.default.contents(atPath: "/usr/share/locale/de/LC_MESSAGES/iso_3166-1.mo"),
            let german = catalogBytes.withUnsafeBytes({ try? MessageCatalog($0) })
        {
            let germanQueries = names.enumerated().map { i, name in
                String((german.translations[name] ?? name).prefix(1 + i % 6))
            }
            rows.append(
                measure("countries(matching:) with the German catalog (locale de)", germanQueries, "") {
                    _ = try? lookups.countries.countries(matching: $0, catalog: german)
                })
        }
        memory.append(("after every timed lookup (\(rows.reduce(0) { $0 + $1.count * rounds }) of them)", resident()))

        let section = markdown(rows: rows, memory: memory, files: files, command: command)
        print(section)
        if let output {
            let existing = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            do {
                try FleetReport.splice(section, into: existing, begin: begin, end: end)
                    .write(toFile: output, atomically: true, encoding: .utf8)
            } catch { fail("cannot write \(output): \(error)") }
        }
        exit(0)
    }

    static func markdown(rows: [Row], memory: [(String, [Int])], files: [Mapping], command: String) -> String {
        func us(_ value: Double) -> String {
            value < 10 ? String(format: "%.2f", value) : String(format: "%.0f", value)
        }
        let names = files.map { URL(fileURLWithPath: $0.path).lastPathComponent }
        var lines = [
            begin,
            "## Geo lookups (DESIGN §9; `akloc-bench geo`)",
            "",
            "`\(command)`, \(ISO8601DateFormatter().string(from: Date())), load \(Machine.loadAverage()).",
            "Over the real data/*.bin, mapped read-only with MADV_RANDOM as aklocd maps them; one lookup",
            "per input, \(rounds) rounds, the median round's p50 and p99 (µs). reverseGeocode is the",
            "daemon's composition (`GeoLookups.describe`: country, zone, placemark, offset) without the socket.",
            "CPU p99 is the thread's CPU time per lookup (each read of the clock costs about 0.2 µs): the",
            "lookup's own tail, without the waits a loaded machine adds to the wall-clock p99.",
            "",
            "| lookup | n | p50 µs | p99 µs | CPU p99 µs | target (p50) |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows {
            lines.append(
                "| \(row.name) | \(row.count) | \(us(row.p50)) | \(us(row.p99)) | \(us(row.cpuP99)) | \(row.target) |")
        }
        lines += [
            "",
            "Resident pages of the mappings (KiB, /proc/self/smaps Rss; the files' pages were dropped from",
            "the page cache first, so these are what the lookups touched; clean file pages the kernel can",
            "drop at any time):",
            "",
            "| | " + zip(names, files).map { "\($0) (\($1.size / 1024) KiB)" }.joined(separator: " | ") + " | total |",
            "|---|" + String(repeating: "---|", count: files.count + 1),
        ]
        for (label, kib) in memory {
            lines.append("| \(label) | " + kib.map(String.init).joined(separator: " | ") + " | \(kib.reduce(0, +)) |")
        }
        lines.append(end)
        return lines.joined(separator: "\n")
    }

    static func loadPoints(_ path: String, column: Int) -> [Coordinate] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let points = text.split(separator: "\n").dropFirst().compactMap { line -> Coordinate? in
            let fields = line.split(separator: ",")
            guard fields.count > column + 1, let lat = Double(fields[column]), let lon = Double(fields[column + 1])
            else { return nil }
            return Coordinate(latitude: lat, longitude: lon)
        }
        guard !points.isEmpty else { fail("no points in \(path)") }
        return points
    }

    static func measure<T>(_ name: String, _ inputs: [T], _ target: String, _ body: (T) -> Void) -> Row {
        var p50s: [Double] = []
        var p99s: [Double] = []
        var cpu99s: [Double] = []
        var times = [Int64](repeating: 0, count: inputs.count)
        var cpuTimes = [Int64](repeating: 0, count: inputs.count)
        for _ in 0..<rounds {
            for (i, input) in inputs.enumerated() {
                let c0 = threadCPUNanos()
                let t0 = Posix.monotonicNanos()
                body(input)
                times[i] = Posix.monotonicNanos() - t0
                cpuTimes[i] = threadCPUNanos() - c0
            }
            times.sort()
            cpuTimes.sort()
            let at99 = min(times.count - 1, times.count * 99 / 100)
            p50s.append(Double(times[times.count / 2]) / 1000)
            p99s.append(Double(times[at99]) / 1000)
            cpu99s.append(Double(cpuTimes[at99]) / 1000)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let row = Row(
            name: name, count: inputs.count, p50: median(p50s), p99: median(p99s), cpuP99: median(cpu99s),
            target: target)
        FileHandle.standardError.write(
            Data("akloc-bench geo: \(name): p50 \(row.p50) µs, p99 \(row.p99) µs, CPU p99 \(row.cpuP99) µs\n".utf8))
        return row
    }

    /// This thread's CPU time: a lookup's own cost, without the time the
    /// scheduler gave other processes (the shared machine's load shows in
    /// the wall-clock p99).
    static func threadCPUNanos() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Rss of the mapping that starts at `base`, from /proc/self/smaps.
    static func residentKiB(_ base: UnsafeMutableRawPointer) -> Int {
        // /proc files have no size: read them to the end rather than by stat.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return -1 }
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let key = String(UInt(bitPattern: base), radix: 16) + "-"
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inside = line.hasPrefix(key)
            } else if inside, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1]) ?? -1
            }
        }
        return -1
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("akloc-bench geo: \(message)\n".utf8))
        exit(1)
    }
}
