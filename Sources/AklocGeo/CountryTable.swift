import AklocCore

/// Every country, and the lookups of DESIGN §9's `countries` op: by code
/// (alpha-2 or alpha-3, any case), by calling code (every country sharing
/// it: "+1" gives all 25 NANP members, where CountryPickerView returned only
/// the first), and by name (case- and diacritic-insensitive prefix of any
/// word of any name, and the codes too: its search never found "gb").
///
/// Built from iso-codes' ISO 3166-1 records, read at run time
/// (/usr/share/iso-codes/json/iso_3166-1.json; the shell reads the file,
/// `Entry.iso3166(json:)` parses it), and data/calling-codes.tsv.
public struct CountryTable: Sendable {
    /// One ISO 3166-1 record as iso-codes has it.
    public struct Entry: Hashable, Sendable {
        public var alpha2: String
        public var alpha3: String
        public var numeric: String
        public var name: String
        public var officialName: String?
        public var commonName: String?

        public init(
            alpha2: String, alpha3: String, numeric: String, name: String, officialName: String? = nil,
            commonName: String? = nil
        ) {
            self.alpha2 = alpha2
            self.alpha3 = alpha3
            self.numeric = numeric
            self.name = name
            self.officialName = officialName
            self.commonName = commonName
        }
    }

    /// A query longer than this is refused (no country name comes close).
    public static let maximumQueryLength = 100

    /// Sorted by alpha-2.
    public let countries: [Country]
    private let byCode: [String: Int]
    /// Each country's search keys, folded once here so a query only compares.
    private let searchKeys: [SearchKeys]

    private struct SearchKeys: Sendable {
        var code: String
        /// Empty for a country without one (XK).
        var alpha3: String
        /// `TextFolding.searchForms` of every name.
        var names: [FoldedText]
    }

    /// Throws `GeoDataReader.Error` for a calling-codes file that is not
    /// UTF-8 lines of `XX<TAB>+NNN[<TAB>name]`, or a record with a bad code.
    public init(entries: [Entry], callingCodes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        var phone: [String: String] = [:]
        var extraNames: [String: String] = [:]
        let text = String(decoding: callingCodes, as: UTF8.self)
        guard text.utf8.elementsEqual(callingCodes) else {
            throw GeoDataReader.Error(.corrupt, "calling codes are not UTF-8")
        }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated()
        where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard (1...3).contains(fields.count), Self.isCode(fields[0], length: 2) else {
                throw GeoDataReader.Error(
                    .corrupt, "calling codes line \(number + 1): \(line.prefix(40).debugDescription)")
            }
            let code = String(fields[0])
            if fields.count >= 2, !fields[1].isEmpty {
                guard fields[1].hasPrefix("+"), Self.isDigits(fields[1].dropFirst(), maximum: 4) else {
                    throw GeoDataReader.Error(.corrupt, "calling code \(fields[1].debugDescription) for \(code)")
                }
                phone[code] = String(fields[1])
            }
            if fields.count == 3, !fields[2].isEmpty { extraNames[code] = String(fields[2]) }
        }
        var countries: [Country] = []
        for entry in entries {
            guard Self.isCode(entry.alpha2[...], length: 2), Self.isCode(entry.alpha3[...], length: 3) else {
                throw GeoDataReader.Error(.corrupt, "ISO 3166-1 record \(entry.alpha2)/\(entry.alpha3)")
            }
            countries.append(
                Country(
                    code: entry.alpha2, alpha3: entry.alpha3, numeric: entry.numeric, name: entry.name,
                    officialName: entry.officialName, commonName: entry.commonName, phoneCode: phone[entry.alpha2]))
        }
        // Codes Natural Earth uses that ISO has not assigned (XK).
        let known = Set(countries.map(\.code))
        for (code, name) in extraNames where !known.contains(code) {
            countries.append(Country(code: code, alpha3: "", numeric: "", name: name, phoneCode: phone[code]))
        }
        countries.sort { $0.code < $1.code }
        self.countries = countries
        var byCode: [String: Int] = [:]
        for (index, country) in countries.enumerated() {
            byCode[country.code] = index
            if !country.alpha3.isEmpty { byCode[country.alpha3] = index }
        }
        self.byCode = byCode
        searchKeys = countries.map { country in
            SearchKeys(
                code: TextFolding.fold(country.code),
                alpha3: country.alpha3.isEmpty ? "" : TextFolding.fold(country.alpha3),
                names: country.names.flatMap(TextFolding.searchForms).map(FoldedText.init))
        }
    }

    // MARK: Lookups

    /// By alpha-2 or alpha-3 code in any case; nil for a well-formed code no
    /// country has. `GeoQueryError.badCountryCode` (naming `field`) for
    /// anything but two or three ASCII letters.
    public func country(code: String, field: String = "code") throws(GeoQueryError) -> Country? {
        let upper = String(
            decoding: code.utf8.map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 - 32 : $0 }, as: UTF8.self
        )
        guard Self.isCode(upper[...], length: 2) || Self.isCode(upper[...], length: 3) else {
            throw GeoQueryError(
                .badCountryCode, field: field,
                "\(field) must be an ISO 3166-1 alpha-2 or alpha-3 code (2 or 3 letters), not \(code.prefix(16).debugDescription)"
            )
        }
        return byCode[upper].map { countries[$0] }
    }

    /// The country of a border lookup's code (never throws for the codes the
    /// borders file has).
    public func country(alpha2: String) -> Country? {
        byCode[alpha2].map { countries[$0] }
    }

    /// Every country with this calling code, "+1" or "1", by name.
    /// `GeoQueryError.badCountryCode` (naming `field`) unless it is an
    /// optional "+" and one to four digits.
    public func countries(phoneCode: String, field: String = "phoneCode") throws(GeoQueryError) -> [Country] {
        let digits = phoneCode.hasPrefix("+") ? phoneCode.dropFirst() : phoneCode[...]
        guard Self.isDigits(digits, maximum: 4), digits.first != "0" else {
            throw GeoQueryError(
                .badCountryCode, field: field,
                "\(field) must be a calling code such as \"+31\" or \"31\", not \(phoneCode.prefix(16).debugDescription)"
            )
        }
        let wanted = "+" + digits
        return countries.filter { $0.phoneCode == wanted }.sorted { $0.name < $1.name }
    }

    /// The query's rule (at most `maximumQueryLength` characters, a letter
    /// or digit once folded), public so a request is refused for it before
    /// the lookup runs; the folded query when it passes.
    public static func checkQuery(_ query: String, field: String = "query") throws(GeoQueryError) -> String {
        try GeoQueryError.checkedQuery(
            query, field: field, maxBytes: maximumQueryLength * 4, maxCharacters: maximumQueryLength)
    }

    /// Countries whose code equals the query, or one of whose names
    /// (localized ones too, with a catalog) has a word, or run of words,
    /// starting with it; folded for case and diacritics. Code matches
    /// first, then names that start with the query, then the rest, each by
    /// name. Results carry `localizedName` when a catalog is given.
    public func countries(
        matching query: String, catalog: MessageCatalog? = nil, field: String = "query"
    ) throws(GeoQueryError) -> [Country] {
        let folded = FoldedText(try Self.checkQuery(query, field: field))
        var ranked: [(rank: Int, country: Country)] = []
        for (index, keys) in searchKeys.enumerated() {
            let name = countries[index].name
            // The catalog folded its translations when it was read.
            let localized = catalog?.searchForms[name] ?? []
            let rank: Int
            // The query folds to something, so an empty alpha3 never matches.
            if folded.text == keys.code || folded.text == keys.alpha3 {
                rank = 0
            } else if keys.names.contains(where: { $0.hasPrefix(folded) })
                || localized.contains(where: { $0.hasPrefix(folded) })
            {
                rank = 1
            } else if keys.names.contains(where: { $0.hasWordPrefix(folded) })
                || localized.contains(where: { $0.hasWordPrefix(folded) })
            {
                rank = 2
            } else {
                continue
            }
            var result = countries[index]
            result.localizedName = catalog?.translations[name]
            ranked.append((rank, result))
        }
        return ranked.sorted { ($0.rank, $0.country.name) < ($1.rank, $1.country.name) }.map(\.country)
    }

    /// The same country with its name in the catalog's language, when it has one.
    public func localized(_ country: Country, catalog: MessageCatalog) -> Country {
        var result = country
        result.localizedName = catalog.translations[country.name]
        return result
    }

    // MARK: Checks

    private static func isCode(_ text: Substring, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    private static func isDigits(_ text: Substring, maximum: Int) -> Bool {
        (1...maximum).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
