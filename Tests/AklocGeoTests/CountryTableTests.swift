import AklocCore
import AklocGeo
import Foundation
import Testing

@Suite struct CountryTableTests {
    /// iso-codes' records, parsed here with Foundation (the daemon will use AklocJSON).
    static let isoRecords: [[String: String]] = {
        let data = FileManager.default.contents(atPath: "/usr/share/iso-codes/json/iso_3166-1.json")!
        let json = try! JSONSerialization.jsonObject(with: data) as! [String: [[String: String]]]
        return json["3166-1"]!
    }()

    nonisolated(unsafe) static let isoJSON = BorderData.bytes("/usr/share/iso-codes/json/iso_3166-1.json")

    static let table = try! CountryTable(
        entries: CountryTable.Entry.iso3166(json: isoJSON), callingCodes: BorderData.bytes("data/calling-codes.tsv"))

    @Test func isoRecordsParseAsFoundationReadsThem() throws {
        let entries = try CountryTable.Entry.iso3166(json: Self.isoJSON)
        #expect(entries.count == Self.isoRecords.count)
        for (entry, record) in zip(entries, Self.isoRecords) {
            #expect(entry.alpha2 == record["alpha_2"] && entry.name == record["name"])
            #expect(entry.officialName == record["official_name"] && entry.commonName == record["common_name"])
        }
        for bad in ["", "{}", "[]", #"{"3166-1": [{"alpha_2": "NL"}]}"#, #"{"3166-1": [1]}"#, "{\"3166-1\": ["] {
            _ = Array(bad.utf8).withUnsafeBytes { raw in
                #expect(throws: GeoDataReader.Error.self, "\(bad)") { try CountryTable.Entry.iso3166(json: raw) }
            }
        }
    }

    static let german: MessageCatalog = {
        let data = FileManager.default.contents(atPath: "/usr/share/locale/de/LC_MESSAGES/iso_3166-1.mo")!
        return data.withUnsafeBytes { try! MessageCatalog($0) }
    }()

    let table = Self.table

    @Test func everyIsoCountryWithItsFlagAndCodes() throws {
        #expect(table.countries.count == Self.isoRecords.count + 1)  // and XK
        for record in Self.isoRecords {
            let country = try #require(try table.country(code: record["alpha_2"]!))
            #expect(country.flag == record["flag"], "\(country.code)")
            #expect(try table.country(code: record["alpha_3"]!.lowercased()) == country)
            #expect(country.numeric == record["numeric"])
        }
        #expect(try table.country(code: "XK")?.phoneCode == "+383")
        #expect(try table.country(code: "nl")?.phoneCode == "+31")
        #expect(try table.country(code: "NL")?.officialName == "Kingdom of the Netherlands")
        #expect(try table.country(code: "AQ")?.phoneCode == nil)
        #expect(try table.country(code: "QQ") == nil)
    }

    @Test func callingCodesReturnEveryCountryThatSharesThem() throws {
        // The North American Numbering Plan's members (ITU), not read from the data.
        let nanp: Set = [
            "US", "CA", "AG", "AI", "AS", "BB", "BM", "BS", "DM", "DO", "GD", "GU", "JM", "KN", "KY", "LC", "MP",
            "MS", "PR", "SX", "TC", "TT", "VC", "VG", "VI",
        ]
        #expect(Set(try table.countries(phoneCode: "+1").map(\.code)) == nanp)
        #expect(try table.countries(phoneCode: "1") == table.countries(phoneCode: "+1"))
        #expect(Set(try table.countries(phoneCode: "+7").map(\.code)) == ["RU", "KZ"])
        #expect(Set(try table.countries(phoneCode: "44").map(\.code)) == ["GB", "GG", "IM", "JE"])
        #expect(try table.countries(phoneCode: "+999").isEmpty)
    }

    @Test func searchFindsCodesAndAnyWordOfAnyName() throws {
        #expect(try table.countries(matching: "gb").first?.code == "GB")
        #expect(try table.countries(matching: "GBR").first?.code == "GB")
        #expect(try table.countries(matching: "neth").map(\.code) == ["NL"])
        #expect(try table.countries(matching: "kingdom").map(\.code).contains("GB"))
        #expect(try table.countries(matching: "united k").map(\.code) == ["GB"])
        #expect(try table.countries(matching: "curacao").map(\.code) == ["CW"])
        #expect(try table.countries(matching: "CÔTE").map(\.code) == ["CI"])
        #expect(try table.countries(matching: "ivoire").map(\.code) == ["CI"])
        #expect(try table.countries(matching: "taiwan").map(\.code) == ["TW"])
        #expect(try table.countries(matching: "réunion").map(\.code) == ["RE"])
        #expect(try table.countries(matching: "zzzz").isEmpty)
    }

    /// Every country's names folded with String's rules, and its codes; with
    /// the German catalog, its German name too.
    static func bruteForms(catalog: MessageCatalog?) -> [(country: Country, codes: [String], names: [String])] {
        table.countries.map { country in
            var names = [country.name, country.officialName, country.commonName].compactMap { $0 }
            if let localized = catalog?.translations[country.name] { names.append(localized) }
            let spaced = names.map { String($0.map { "'\u{2019}\u{02BC}".contains($0) ? " " : $0 }) }
            let codes = [country.code, country.alpha3].filter { !$0.isEmpty }.map(TextFolding.fold)
            return (country, codes, (names + spaced).map(TextFolding.fold))
        }
    }
    static let bruteEnglish = bruteForms(catalog: nil)
    static let bruteGerman = bruteForms(catalog: german)

    /// The search rule by a scan with String's prefix tests: codes first,
    /// then names that start with the query, then names with a word that does.
    static func bruteSearch(_ query: String, catalog: MessageCatalog?) -> [String] {
        let folded = TextFolding.fold(query)
        var ranked: [(Int, String, String)] = []
        for (country, codes, names) in catalog == nil ? bruteEnglish : bruteGerman {
            if codes.contains(folded) {
                ranked.append((0, country.name, country.code))
            } else if names.contains(where: { $0.hasPrefix(folded) }) {
                ranked.append((1, country.name, country.code))
            } else if names.contains(where: { TextFolding.hasWordPrefix($0, folded) }) {
                ranked.append((2, country.name, country.code))
            }
        }
        return ranked.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }

    /// Prefixes of names (English, official, common and German), of later
    /// words, and codes, against the scan, with and without the catalog.
    @Test func nameSearchAgreesWithAScanOfEveryName() throws {
        var random = GeoFixtures.Random(seed: 31)
        var queries = [
            "gb", "GBR", "xk", "neth", "united k", "ivoire", "d'ivoire", "CÔTE", "zzzz", "Niederl", "Deutschland",
            "Россия", "日本",
        ]
        for country in table.countries {
            var names = [country.name, country.officialName, country.commonName].compactMap { $0 }
            if let german = Self.german.translations[country.name] { names.append(german) }
            let name = names.randomElement(using: &random)!
            let word = name.split(separator: " ").randomElement(using: &random)!
            switch Int.random(in: 0..<3, using: &random) {
            case 0: queries.append(String(name.prefix(Int.random(in: 1...8, using: &random))))
            case 1: queries.append(String(word.prefix(Int.random(in: 1...6, using: &random))).uppercased())
            default: queries.append(String(name.dropFirst(Int.random(in: 1...3, using: &random)).prefix(5)))
            }
        }
        var compared = 0
        for query in queries where !TextFolding.fold(query).isEmpty {
            for catalog in [nil, Self.german] {
                let found = try table.countries(matching: query, catalog: catalog)
                #expect(found.map(\.code) == Self.bruteSearch(query, catalog: catalog), "\(query.debugDescription)")
                #expect(found.allSatisfy { $0.localizedName == catalog?.translations[$0.name] })
                compared += 1
            }
        }
        #expect(compared > 500)
    }

    @Test func localizedNamesFromTheIsoCodesCatalog() throws {
        let german = Self.german
        let found = try table.countries(matching: "Deutschland", catalog: german)
        #expect(found.map(\.code) == ["DE"])
        #expect(found.first?.localizedName == "Deutschland")
        #expect(try table.countries(matching: "Niederl", catalog: german).map(\.code) == ["NL", "SX"])
        #expect(try table.countries(matching: "Deutschland").isEmpty)
        #expect(
            table.localized(try #require(try table.country(code: "CH")), catalog: german).localizedName == "Schweiz")
        #expect(
            MessageCatalog.candidatePaths(locale: "pt_BR") == [
                "pt_BR/LC_MESSAGES/iso_3166-1.mo", "pt/LC_MESSAGES/iso_3166-1.mo",
            ])
        #expect(MessageCatalog.candidatePaths(locale: "de-DE.UTF-8")?.first == "de_DE/LC_MESSAGES/iso_3166-1.mo")
        for bad in ["", "x", "../../etc", "de/../..", "DE", "d1", String(repeating: "a", count: 40), "de\u{0}"] {
            #expect(MessageCatalog.candidatePaths(locale: bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func badCodesQueriesAndPhoneCodesNameTheField() {
        for code in ["G", "GBRX", "G1", "", "12", "ÄÖ", "gb "] {
            #expect(throws: GeoQueryError.self, "\(code)") { try table.country(code: code) }
        }
        for phone in ["+1a", "", "+", "++1", "12345", "+0", "one"] {
            #expect(throws: GeoQueryError.self, "\(phone)") { try table.countries(phoneCode: phone) }
        }
        #expect(throws: GeoQueryError(.emptyQuery, field: "query", "query has no letters or digits")) {
            try table.countries(matching: " - ")
        }
        #expect(throws: GeoQueryError.self) { try table.countries(matching: String(repeating: "a", count: 10_000)) }
        do {
            _ = try table.country(code: "G1", field: "code")
        } catch {
            #expect(error.code == .badCountryCode && error.field == "code")
        }
    }

    @Test func damagedCallingCodesAndCatalogsAreErrors() {
        for text in ["nl\t+31", "NL\t31", "NL\t+3x", "NLD\t+31", "NL\t+31\tx\ty"] {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { raw in
                #expect(throws: GeoDataReader.Error.self, "\(text)") {
                    try CountryTable(entries: [], callingCodes: raw)
                }
            }
        }
        let mo = FileManager.default.contents(atPath: "/usr/share/locale/de/LC_MESSAGES/iso_3166-1.mo")!
        for cut in [0, 3, 27, 28, mo.count / 2, mo.count - 1] {
            _ = mo.prefix(cut).withUnsafeBytes { raw in
                #expect(throws: GeoDataReader.Error.self, "cut at \(cut)") { try MessageCatalog(raw) }
            }
        }
        var garbage = Array(mo)
        for index in stride(from: 8, to: 28, by: 1) { garbage[index] = 0xFF }
        _ = garbage.withUnsafeBytes { raw in
            #expect(throws: GeoDataReader.Error.self) { try MessageCatalog(raw) }
        }
    }
}
