import AklocCore
import Foundation
import Testing

@testable import AklocGeo

/// `searchPlaces` on the committed data: named cases, bad input, and 1 000
/// random queries against a brute-force scan of every place's names.
@Suite struct PlaceSearchTests {
    static let gazetteer = GeoFixtures.gazetteer

    @Test func foldingFindsZurichSaoPauloAndNewYork() throws {
        let zurich = try Self.gazetteer.searchPlaces("zurich", near: nil, within: 0, limit: 5)
        #expect(zurich.first?.place.name == "Zürich")
        #expect(zurich.first?.match == .exact)
        #expect(try Self.gazetteer.searchPlaces("ZÜRICH", near: nil, within: 0).first?.place.name == "Zürich")
        #expect(try Self.gazetteer.searchPlaces("Zuerich", near: nil, within: 0).first?.place.name == "Zürich")
        let saoPaulo = try Self.gazetteer.searchPlaces("sao paulo", near: nil, within: 0, limit: 5)
        #expect(saoPaulo.first?.place.name == "São Paulo")
        #expect(saoPaulo.first?.place.countryCode == "BR")
        let york = try Self.gazetteer.searchPlaces("york", near: nil, within: 0, limit: 100)
        #expect(york.contains { $0.place.name == "New York City" })
        #expect(york.contains { $0.place.name == "East New York" && $0.match == .wordPrefix })
        #expect(york.first?.match == .exact)
        #expect(try Self.gazetteer.searchPlaces("new yo", near: nil, within: 0).first?.place.name == "New York City")
    }

    @Test func alternateNamesFindTheHague() throws {
        for query in ["den haag", "the hague", "Den Haag", "'s-Gravenhage", "s gravenhage", "La Haye"] {
            let found = try Self.gazetteer.searchPlaces(query, near: nil, within: 0, limit: 3)
            #expect(found.first?.place.name == "The Hague", "\(query)")
        }
        let munich = try Self.gazetteer.searchPlaces("München", near: nil, within: 0, limit: 3)
        #expect(munich.first?.place.name == "Munich")
    }

    @Test func rankingIsMatchThenDistanceThenPopulation() throws {
        let enkhuizen = Coordinate(latitude: 52.7033, longitude: 5.2917)
        let near = try Self.gazetteer.searchPlaces("enk", near: enkhuizen, within: 10_000, limit: 10)
        #expect(near.first?.place.name == "Enkhuizen")
        #expect(near.allSatisfy { ($0.distance ?? .infinity) <= 10_000 })
        // Far from Enkhuizen, "and" ranks Andijk after every exact "And…" match.
        let prefix = try Self.gazetteer.searchPlaces("andijk", near: enkhuizen, within: 0, limit: 10)
        #expect(prefix.first?.place.name == "Andijk")
        let anywhere = try Self.gazetteer.searchPlaces("san", near: enkhuizen, within: 0, limit: 100)
        #expect(anywhere.count == 100)
        for (a, b) in zip(anywhere, anywhere.dropFirst()) {
            #expect(a.match < b.match || (a.match == b.match && a.distance! <= b.distance!))
        }
        let noNear = try Self.gazetteer.searchPlaces("london", near: nil, within: 10_000, limit: 5)
        #expect(noNear.first?.place.countryCode == "GB")
        #expect(noNear.allSatisfy { $0.distance == nil })
        let populations = noNear.filter { $0.match == .exact }.map(\.place.population)
        #expect(populations == populations.sorted(by: >))
    }

    @Test func badQueriesLimitsAndDistancesAreRefused() {
        let origin = Coordinate(latitude: 52, longitude: 5)
        func code(_ body: () throws -> Void) -> GeoQueryError.Code? {
            do { try body() } catch let error as GeoQueryError { return error.code } catch { return nil }
            return nil
        }
        let g = Self.gazetteer
        #expect(code { _ = try g.searchPlaces("", near: origin) } == .emptyQuery)
        #expect(code { _ = try g.searchPlaces("  ,;-  ", near: origin) } == .emptyQuery)
        #expect(code { _ = try g.searchPlaces(String(repeating: "a", count: 10_000), near: origin) } == .queryTooLong)
        #expect(code { _ = try g.searchPlaces(String(repeating: "ß", count: 128), near: origin) } == nil)
        #expect(code { _ = try g.searchPlaces("x", near: origin, limit: 0) } == .badLimit)
        #expect(code { _ = try g.searchPlaces("x", near: origin, limit: 101) } == .badLimit)
        #expect(code { _ = try g.searchPlaces("x", near: origin, limit: 1_000_000_000) } == .badLimit)
        #expect(code { _ = try g.searchPlaces("x", near: origin, within: -1) } == .badDistance)
        #expect(code { _ = try g.searchPlaces("x", near: origin, within: .nan) } == .badDistance)
        #expect(code { _ = try g.searchPlaces("x", near: Coordinate(latitude: 91, longitude: 0)) } == .badCoordinate)
        #expect(code { _ = try g.searchPlaces("x", near: Coordinate(latitude: .nan, longitude: 0)) } == .badCoordinate)
        #expect((try? g.searchPlaces("x", near: origin, limit: 100))?.count ?? 0 <= 100)
        #expect((try? g.searchPlaces("qqqqzzzz", near: origin))?.isEmpty == true)
    }

    /// Every place's folded names (its own and the kept alternates), taken
    /// from the index entries that start a name; the brute force below makes
    /// the word starts itself.
    static let names: [[String]] = {
        var names = [[String]](repeating: [], count: gazetteer.count)
        for entry in 0..<gazetteer.indexCount {
            let value = try! gazetteer.index.uint32(at: entry * 8 + 4)
            guard value & 2 != 0 else { continue }
            let start = Int(try! gazetteer.index.uint32(at: entry * 8))
            var bytes: [UInt8] = []
            while case let byte = try! gazetteer.pool.uint8(at: start + bytes.count), byte != 0 { bytes.append(byte) }
            names[Int(value >> 2)].append(String(decoding: bytes, as: UTF8.self))
        }
        return names
    }()

    /// Word-start suffixes by first byte: (place, suffix, starts the name).
    static let suffixes: [UInt8: [(place: Int, text: String, whole: Bool)]] = {
        var buckets: [UInt8: [(place: Int, text: String, whole: Bool)]] = [:]
        for (place, forms) in names.enumerated() {
            for form in forms {
                let words = form.split(separator: " ")
                for start in words.indices {
                    let text = words[start...].joined(separator: " ")
                    buckets[text.utf8.first!, default: []].append((place, text, start == 0))
                }
            }
        }
        return buckets
    }()

    static func bruteSearch(
        _ query: String, near: Coordinate, within: Double, limit: Int
    ) throws -> [Int] {
        let q = TextFolding.fold(query)
        var best: [Int: Int] = [:]
        for candidate in suffixes[q.utf8.first!] ?? [] where candidate.text.hasPrefix(q) {
            let rank = candidate.whole ? (candidate.text == q ? 0 : 1) : 2
            best[candidate.place] = min(best[candidate.place] ?? 3, rank)
        }
        var rows: [(rank: Int, distance: Double, population: Int, place: Int)] = []
        for (place, rank) in best {
            let p = try gazetteer.place(at: place)
            let distance = near.distance(to: p.coordinate)
            if within > 0, distance > within { continue }
            rows.append((rank, distance, p.population, place))
        }
        rows.sort {
            ($0.rank, $0.distance, -$0.population, $0.place) < ($1.rank, $1.distance, -$1.population, $1.place)
        }
        return rows.prefix(limit).map(\.place)
    }

    /// The brute force's names come from the index; check them against the
    /// records themselves, so an index that lost a name cannot pass.
    @Test func indexHoldsEveryPlacesOwnName() throws {
        var missing: [String] = []
        for place in 0..<Self.gazetteer.count {
            let record = try Self.gazetteer.place(at: place)
            let folded = TextFolding.fold(record.name)
            if !folded.isEmpty, !Self.names[place].contains(folded) { missing.append(record.name) }
        }
        #expect(missing.isEmpty, "\(missing.prefix(20))")
    }

    @Test func randomQueriesMatchABruteForceScan() throws {
        var random = GeoFixtures.Random(seed: 21)
        var nonEmpty = 0
        for _ in 0..<1000 {
            let place = Int.random(in: 0..<Self.gazetteer.count, using: &random)
            let forms = Self.names[place]
            // A third of the queries start from the record's own name as
            // written (diacritics, apostrophes, case), the rest from a
            // folded name or alternate.
            let raw = try Self.gazetteer.place(at: place).name
            let form = Int.random(in: 0..<3, using: &random) == 0 ? raw : forms.randomElement(using: &random)!
            let words = form.split(separator: " ")
            let from = Int.random(in: 0..<words.count, using: &random)
            var text = words[from...].joined(separator: " ")
            text = String(text.prefix(Int.random(in: 1...max(1, min(text.count, 12)), using: &random)))
            guard !TextFolding.fold(text).isEmpty else { continue }
            // Query as a person might type it: upper case, sometimes.
            let query = Bool.random(using: &random) ? text.uppercased() : text
            let nearPlace = try Self.gazetteer.place(at: Int.random(in: 0..<Self.gazetteer.count, using: &random))
            let within = [0.0, 10_000, 200_000].randomElement(using: &random)!
            let limit = Int.random(in: 1...20, using: &random)
            let found = try Self.gazetteer.searchPlaces(query, near: nearPlace.coordinate, within: within, limit: limit)
            let expected = try Self.bruteSearch(query, near: nearPlace.coordinate, within: within, limit: limit)
            #expect(found.map(\.place.index) == expected, "\(query) near \(nearPlace.name) within \(within)")
            if !found.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 300)
    }
}
