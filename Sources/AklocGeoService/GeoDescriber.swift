import AklocCore
import AklocGeo
import AklocJSON
import AklocPosix
import AklocProtocol

/// The engine's view of the geo lookups: a fix in, the `myPlacemark`,
/// `country` and `timeZone` values out, already in their wire form (the
/// engine compares them to decide whether a change event is due).
struct GeoDescriber: LocationDescriber {
    let lookups: GeoLookups
    let timeZones: TimeZoneCatalog
    /// The files `lookups` reads in place, kept mapped as long as this is.
    let mappings: [MappedFile]

    func describe(_ location: Location) -> DerivedValues {
        let point = Coordinate(latitude: location.latitude, longitude: location.longitude)
        // The zone's offset now (DESIGN §9): when aklocd received the fix. Not
        // the fix's own time, which gpsd guesses before the receiver sends a date.
        guard let time = location.receivedAt ?? location.timestamp,
            let description = try? lookups.describe(point, at: time.secondsSince1970, rules: timeZones.rules)
        else { return DerivedValues() }
        let values = GeoWire.keyPathValues(description)
        func wire(_ value: JSONValue) -> KeyPathValue { value == .null ? .null : .json(value.jsonBytes) }
        return DerivedValues(
            placemark: wire(values.placemark), country: wire(values.country), timeZone: wire(values.timeZone))
    }
}
