import AklocCore
import AklocGeo
import AklocPosix
import AklocProtocol

/// The geo lookups of DESIGN §9 as a daemon component: maps the data files
/// (places.bin, borders.bin, timezones.bin and their tables) from the data
/// directory read-only, and reads iso-codes and tzdata at run time.
///
/// Missing or damaged data is not fatal: aklocd logs why once, the geo ops
/// answer `unavailable` with that reason, and everything else keeps
/// working. Other components and ops call `describe`, `search` and
/// `countries` (docs/places.md).
///
/// Confinement: the daemon's queue. `describer` is Sendable and goes into
/// the engine.
final class GeoService: Component {
    let name = "geo lookups"

    /// The files one data directory must hold.
    static let files = [
        "places.bin", "borders.bin", "timezones.bin", "zone-countries.tsv", "calling-codes.tsv",
    ]
    /// The indexed files, read a few pages per lookup; the tables are read whole.
    static let indexedFiles: Set<String> = ["places.bin", "borders.bin", "timezones.bin"]
    static let isoCodesJSON = "/usr/share/iso-codes/json/iso_3166-1.json"
    static let localeDirectory = "/usr/share/locale"
    /// Locales whose names are iso-codes' own (English) names: no catalog.
    static let sourceLocales: Set<String> = ["en", "C", "POSIX"]

    private let directories: [String]
    private let isoCodesPath: String
    private let localeDirectory: String
    private let log: (LogLevel, String, KeyValuePairs<String, String>) -> Void
    let timeZones: TimeZoneCatalog

    private(set) var lookups: GeoLookups?
    /// Why `lookups` is nil (after `start`): what the geo ops answer.
    private(set) var unavailableReason = "the geo data is not loaded"
    /// The directory the data came from.
    private(set) var dataDirectory: String?
    /// The mappings back `lookups`: whoever keeps the lookups keeps these.
    private(set) var mappings: [MappedFile] = []
    private var catalogs: [String: MessageCatalog] = [:]

    init(
        directories: [String], isoCodesPath: String = GeoService.isoCodesJSON,
        localeDirectory: String = GeoService.localeDirectory, zoneInfoDirectory: String,
        log: @escaping (LogLevel, String, KeyValuePairs<String, String>) -> Void
    ) {
        self.directories = directories
        self.isoCodesPath = isoCodesPath
        self.localeDirectory = localeDirectory
        self.log = log
        timeZones = TimeZoneCatalog(directory: zoneInfoDirectory)
    }

    func start() throws(ComponentError) {
        var reasons: [String] = []
        for directory in directories {
            do throws(LoadError) {
                try load(directory)
                log(
                    .info, "geo data from \(directory)",
                    [
                        "places": String(lookups?.gazetteer.count ?? 0),
                        "countries": String(lookups?.countries.countries.count ?? 0),
                    ])
                return
            } catch {
                reasons.append(error.message)
                if error.fileMissing { continue }
                break
            }
        }
        unavailableReason = "no geo data: " + reasons.joined(separator: "; ")
        log(.warning, "\(unavailableReason); places, countries and time zones are unavailable", [:])
    }

    func stop() {
        // The engine's describer keeps its own references to the mappings.
        lookups = nil
        catalogs = [:]
        mappings = []
    }

    private struct LoadError: Error {
        var message: String
        var fileMissing = false
    }

    private func load(_ directory: String) throws(LoadError) {
        var mapped: [String: MappedFile] = [:]
        for file in Self.files {
            let path = "\(directory)/\(file)"
            do {
                mapped[file] = try MappedFile(path: path, access: Self.indexedFiles.contains(file) ? .random : .normal)
            } catch {
                throw LoadError(message: "\(path): \(error.message)", fileMissing: error == .noSuchFile)
            }
        }
        let iso: [UInt8]
        do {
            iso = try FileReader.read(isoCodesPath, limit: 16 << 20)
        } catch {
            throw LoadError(message: "\(isoCodesPath) (Debian iso-codes): \(error.message)")
        }
        do {
            let gazetteer = try Gazetteer(mapped["places.bin"]!.bytes)
            let zones = try TimeZoneBorders(mapped["timezones.bin"]!.bytes)
            let borders = try CountryBorders(
                mapped["borders.bin"]!.bytes, zones: zones, zoneCountries: mapped["zone-countries.tsv"]!.bytes)
            let entries = try iso.withUnsafeBytes { (bytes) throws(GeoDataReader.Error) in
                try CountryTable.Entry.iso3166(json: bytes)
            }
            let countries = try CountryTable(entries: entries, callingCodes: mapped["calling-codes.tsv"]!.bytes)
            lookups = GeoLookups(gazetteer: gazetteer, borders: borders, zones: zones, countries: countries)
        } catch {
            throw LoadError(message: "\(directory): \(error)")
        }
        mappings = Array(mapped.values)
        dataDirectory = directory
    }

    // MARK: Lookups (for ops and other components)

    /// The lookups, or `unavailable` saying why there are none.
    func available() throws(ProtocolError) -> GeoLookups {
        guard let lookups else { throw ProtocolError(.unavailable, unavailableReason) }
        return lookups
    }

    /// The placemark, country and time zone of a point, the zone's offset at
    /// `time`. `field` names the request member for a bad coordinate.
    func describe(_ point: Coordinate, at time: FixTime, field: String = "coordinate") throws(ProtocolError)
        -> GeoLookups.Description
    {
        let lookups = try available()
        let zones = timeZones
        return try Self.answer {
            try lookups.describe(point, at: time.secondsSince1970, field: field, rules: zones.rules)
        }
    }

    /// `placemark(for:)`: DESIGN's name for the same lookup.
    func placemark(for point: Coordinate, at time: FixTime) throws(ProtocolError) -> Placemark {
        try describe(point, at: time).placemark
    }

    /// The message catalog of a locale; nil for iso-codes' own English.
    /// `badRequest` naming `locale` for a malformed locale or one iso-codes
    /// has no translations for.
    func catalog(locale: String) throws(ProtocolError) -> MessageCatalog? {
        if Self.sourceLocales.contains(locale) || locale.hasPrefix("en_") || locale.hasPrefix("en-") { return nil }
        if let known = catalogs[locale] { return known }
        guard let candidates = MessageCatalog.candidatePaths(locale: locale) else {
            throw ProtocolError(
                .badRequest, "\"locale\" must be a locale name such as \"de\" or \"pt_BR\", not \(Self.shown(locale))")
        }
        for candidate in candidates {
            let path = "\(localeDirectory)/\(candidate)"
            guard let bytes = try? FileReader.read(path, limit: MessageCatalog.maximumSize),
                bytes.count <= MessageCatalog.maximumSize,
                let catalog = bytes.withUnsafeBytes({ try? MessageCatalog($0) })
            else { continue }
            // A handful of locales in use at once; a client cycling through
            // every one must not grow the daemon.
            if catalogs.count >= 8 { catalogs.removeAll() }
            catalogs[locale] = catalog
            return catalog
        }
        throw ProtocolError(
            .badRequest, "\"locale\": iso-codes has no country names for \(Self.shown(locale)) (in \(localeDirectory))")
    }

    /// Runs a lookup, turning its errors into wire errors: a refused
    /// argument is `badRequest` naming its field, damaged data `internalError`.
    static func answer<T>(_ body: () throws -> T) throws(ProtocolError) -> T {
        do {
            return try body()
        } catch let error as GeoQueryError {
            throw ProtocolError(.badRequest, "\"\(error.field)\": \(error.message)")
        } catch let error as GeoDataReader.Error {
            throw ProtocolError(.internalError, "geo data is damaged: \(error)")
        } catch {
            throw ProtocolError(.internalError, "geo lookup failed: \(error)")
        }
    }

    static func shown(_ text: String) -> String {
        (text.count > 32 ? String(text.prefix(32)) + "…" : text).debugDescription
    }
}
