import AklocCore
import AklocFeature
import AklocGeo
import AklocJSON
import AklocPosix
import AklocProtocol

/// `[geo]` as a feature (DESIGN §9, docs/places.md): the geo lookups over
/// the mapped data, the engine's describer for the derived key paths
/// (`myPlacemark`, `country`, `timeZone`), and the ops `reverseGeocode`,
/// `searchPlaces` and `countries`. Missing or damaged data is not fatal: the
/// ops and the derived key paths answer `unavailable`, saying why.
public final class GeoFeature: Feature {
    public typealias Settings = GeoSettings

    public var name: String { geo.name }
    private let host: any FeatureHost
    let geo: GeoService

    public static func make(_ settings: GeoSettings, host: any FeatureHost) -> GeoFeature? {
        GeoFeature(
            service: GeoService(
                directories: settings.dataDirectories(executable: ProcessEnvironment.executablePath()),
                zoneInfoDirectory: ProcessEnvironment.current()["TZDIR"] ?? "/usr/share/zoneinfo",
                log: { [weak host] level, message, fields in host?.log(level, message, fields) }),
            host: host)
    }

    init(service: GeoService, host: any FeatureHost) {
        geo = service
        self.host = host
    }

    public func start() throws(ComponentError) {
        try geo.start()
        // The derived key paths.
        guard let lookups = geo.lookups else { return }
        host.describe(with: GeoDescriber(lookups: lookups, timeZones: geo.timeZones, mappings: geo.mappings))
        // The same lookups for other features (the timeline).
        let zones = geo.timeZones
        let mappings = geo.mappings
        host.post(
            PlaceDescriber(
                describe: { point, time in
                    withExtendedLifetime(mappings) { try? lookups.describe(point, at: time, rules: zones.rules) }
                },
                countryCode: { point in
                    withExtendedLifetime(mappings) { (try? lookups.borders.country(at: point))??.code }
                }))
    }

    public func stop() { geo.stop() }

    public func apply(_ settings: GeoSettings) {
        host.log(.notice, "[geo] applies at the next restart; the geo data stays as loaded")
    }

    public func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    {
        guard case .geo(let request) = operation else { return nil }
        do throws(ProtocolError) {
            return .success(ServerEncoder.reply(id: id, result: try geoResult(request, for: client.id)))
        } catch {
            return .failure(error)
        }
    }

    /// Observing or getting a derived key path without geo data: `unavailable`, saying why.
    public func refusal(of request: Engine.Request) -> ProtocolError? {
        guard geo.lookups == nil else { return nil }
        switch request {
        case .observe(let keyPath, _, _, _), .get(let keyPath):
            return keyPath.isDerived ? ProtocolError(.unavailable, "\(keyPath): \(geo.unavailableReason)") : nil
        default:
            return nil
        }
    }

    /// The result of `reverseGeocode`, `searchPlaces` or `countries`
    /// (docs/places.md, docs/countries.md). Lookups on the current fix need
    /// what `get myLocation` needs; lookups of a given point or code need nothing.
    private func geoResult(_ request: GeoRequest, for id: SubscriberID) throws(ProtocolError) -> JSONValue {
        let lookups = try geo.available()
        switch request {
        case .reverseGeocode(let coordinate):
            let point: Coordinate
            // The zone's offset now (DESIGN §9), whatever the fix's age.
            let time = host.clock.wallNow()
            if let coordinate {
                point = Coordinate(latitude: coordinate.latitude, longitude: coordinate.longitude)
            } else {
                guard let fix = try currentFix(for: id) else {
                    throw ProtocolError(.unavailable, "no current fix; give a \"coordinate\"")
                }
                point = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
            }
            let description = try geo.describe(point, at: time)
            return ["placemark": GeoWire.placemark(description.placemark, timeZone: description.timeZone)]

        case .searchPlaces(let query, let near, let within, let limit):
            var center = near.map { Coordinate(latitude: $0.latitude, longitude: $0.longitude) }
            if near == nil, let fix = try currentFix(for: id) {
                center = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
            }
            // Without a point there is no distance to limit or rank by.
            let placemarks = try GeoService.answer {
                try lookups.search(query, near: center, within: center == nil ? 0 : within, limit: limit)
            }
            let now = host.clock.wallNow().secondsSince1970
            let zones = geo.timeZones
            return [
                "places": .array(
                    placemarks.map { placemark in
                        let zone = placemark.timeZone.flatMap { identifier in
                            zones.rules(identifier).map { TimeZoneInfo(identifier: identifier, rules: $0, at: now) }
                        }
                        return ["placemark": GeoWire.placemark(placemark, timeZone: zone)]
                    })
            ]

        case .countries(let selector, let locale):
            let catalog = try locale.flatMap { (locale) throws(ProtocolError) in try geo.catalog(locale: locale) }
            let table = lookups.countries
            var found: [Country]
            switch selector {
            case .all: found = table.countries
            case .code(let code): found = try GeoService.answer { try table.country(code: code) }.map { [$0] } ?? []
            case .phoneCode(let phone): found = try GeoService.answer { try table.countries(phoneCode: phone) }
            case .query(let query):
                found = try GeoService.answer { try table.countries(matching: query, catalog: catalog) }
            }
            if let catalog { found = found.map { table.localized($0, catalog: catalog) } }
            return ["countries": .array(found.map(GeoWire.country))]
        }
    }

    /// The current fix as this client may see it (nil: none), or `notAuthorized`.
    private func currentFix(for id: SubscriberID) throws(ProtocolError) -> Location? {
        switch host.visibleLocation(for: id) {
        case .success(let fix): return fix
        case .failure(let error): throw ProtocolError(error)
        }
    }
}
