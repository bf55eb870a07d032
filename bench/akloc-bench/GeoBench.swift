import AklocGeo
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench geo [data/places.bin]`: the gazetteer's lookup times and the
/// pages of the mapped file they touch, as aklocd will map it (read-only,
/// MADV_RANDOM so the kernel maps only the faulted page, no fault-around).
enum GeoBench {
    static func main(path: String) -> Never {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { fail("cannot open \(path)") }
        var info = stat()
        guard fstat(fd, &info) == 0 else { fail("cannot stat \(path)") }
        let size = Int(info.st_size)
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            fail("cannot map \(path)")
        }
        close(fd)
        _ = madvise(base, size, MADV_RANDOM)
        let bytes = UnsafeRawBufferPointer(start: base, count: size)
        let start = residentKiB(base)
        let gazetteer: Gazetteer
        do { gazetteer = try Gazetteer(bytes) } catch { fail("\(path): \(error)") }
        print("file: \(path), \(size) bytes, \(gazetteer.count) places")
        print("resident after open: \(residentKiB(base) - start) KiB")

        var random = SystemRandomNumberGenerator()
        func randomPoint() -> Coordinate {
            let z = Double.random(in: -1...1, using: &random)
            return Coordinate(latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180..<180, using: &random))
        }
        // Points near real places: where people are.
        var anchors: [PopulatedPlace] = []
        for _ in 0..<1000 { anchors.append(try! gazetteer.place(at: Int.random(in: 0..<gazetteer.count))) }
        munmapAndRemap(base, size, path)
        _ = try? gazetteer.placemark(at: anchors[0].coordinate)
        print("resident after one reverse geocode (cold mapping): \(residentKiB(base)) KiB")
        // A moving receiver: every fix of the IJsselmeer boat capture.
        munmapAndRemap(base, size, path)
        let track = Options.packageRoot + "/Tests/Fixtures/geo/ijsselmeer-track.csv"
        let fixes = ((try? String(contentsOfFile: track, encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
            .compactMap { line -> Coordinate? in
                let fields = line.split(separator: ",")
                guard fields.count >= 2, let lat = Double(fields[0]), let lon = Double(fields[1]) else { return nil }
                return Coordinate(latitude: lat, longitude: lon)
            }
        report("reverse geocode along the boat track", fixes) {
            _ = try? gazetteer.placemark(at: $0, country: ("NL", nil))
        }
        print("resident after the boat track's \(fixes.count) reverse geocodes: \(residentKiB(base)) KiB")
        munmapAndRemap(base, size, path)

        let nearPoints = (0..<10_000).map { i -> Coordinate in
            let a = anchors[i % anchors.count].coordinate
            return Coordinate(
                latitude: max(-90, min(90, a.latitude + Double.random(in: -0.05...0.05, using: &random))),
                longitude: max(-180, min(180, a.longitude + Double.random(in: -0.05...0.05, using: &random))))
        }
        report("nearest (near places)", nearPoints) { _ = try? gazetteer.nearest(to: $0) }
        report("nearest (uniform on the sphere)", (0..<10_000).map { _ in randomPoint() }) {
            _ = try? gazetteer.nearest(to: $0)
        }
        let inCountry = nearPoints.enumerated().map { ($0.element, anchors[$0.offset % anchors.count].countryCode) }
        report("nearest in the point's country", inCountry) { _ = try? gazetteer.nearest(to: $0.0, countryCode: $0.1) }
        report("nearest in NL from anywhere (worst case)", Array(nearPoints.prefix(1000))) {
            _ = try? gazetteer.nearest(to: $0, countryCode: "NL")
        }
        report("reverse geocode (placemark)", nearPoints) { _ = try? gazetteer.placemark(at: $0) }
        print("resident after 41 000 lookups around the world: \(residentKiB(base)) KiB")
        munmapAndRemap(base, size, path)

        let queries = (0..<2000).map { i -> (String, Coordinate) in
            let anchor = anchors[i % anchors.count]
            let folded = TextFolding.fold(anchor.name)
            return (String(folded.prefix(Int.random(in: 3...6, using: &random))), anchor.coordinate)
        }
        for pass in ["cold", "warm"] {
            report("\(pass): searchPlaces 3-6 letters within 10 km", queries) {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 10_000, limit: 10)
            }
            report("\(pass): searchPlaces 3-6 letters anywhere", queries) {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 0, limit: 10)
            }
            report(
                "\(pass): searchPlaces 1 letter anywhere",
                (0..<200).map { _ in (["s", "a", "m"].randomElement()!, randomPoint()) }
            ) {
                _ = try? gazetteer.searchPlaces($0.0, near: $0.1, within: 0, limit: 10)
            }
            if pass == "cold" { print("resident after 4 200 searches: \(residentKiB(base)) KiB") }
        }
        exit(0)
    }

    /// Drops the mapping's pages from this process and the file's clean pages
    /// from the page cache, so the next lookups show what they touch: the
    /// kernel then reads and maps small folios (64 KiB here) rather than the
    /// 2 MiB ones a file written or read whole ends up in.
    static func munmapAndRemap(_ base: UnsafeMutableRawPointer, _ size: Int, _ path: String) {
        munmap(base, size)
        let fd = open(path, O_RDONLY)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        let again = mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0)
        close(fd)
        guard again == base else { fail("cannot remap \(path)") }
        _ = madvise(base, size, MADV_RANDOM)
    }

    static func report<T>(_ name: String, _ inputs: [T], _ body: (T) -> Void) {
        var times: [Int64] = []
        times.reserveCapacity(inputs.count)
        for input in inputs {
            let t0 = Posix.monotonicNanos()
            body(input)
            times.append(Posix.monotonicNanos() - t0)
        }
        times.sort()
        func us(_ q: Double) -> String {
            String(format: "%.1f", Double(times[min(times.count - 1, Int(Double(times.count) * q))]) / 1000)
        }
        print("\(name): n=\(times.count) p50 \(us(0.5)) µs, p99 \(us(0.99)) µs, max \(us(1.0)) µs")
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
