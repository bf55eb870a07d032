import AklocGeo
import AklocJSON

/// The wire forms of DESIGN §9's model (docs/places.md, docs/countries.md):
/// one place writes them, for the op replies and the derived key paths
/// alike. Unknown members are left out, never `null`.
public enum GeoWire {
    /// A placemark; `timeZone`, when given, replaces the bare identifier with
    /// the `TimeZone` object (CLPlacemark's `timeZone` is one too). Distances
    /// are whole metres and bearings tenths of a degree: finer is noise, and
    /// a change event for a centimetre would be one too many.
    public static func placemark(_ placemark: Placemark, timeZone: TimeZoneInfo? = nil) -> JSONValue {
        var members: [String: JSONValue] = [
            "coordinate": coordinate(placemark.coordinate),
            "formattedAddress": .string(placemark.formattedAddress),
        ]
        members["name"] = placemark.name.map(JSONValue.string)
        members["locality"] = placemark.locality.map(JSONValue.string)
        members["subAdministrativeArea"] = placemark.subAdministrativeArea.map(JSONValue.string)
        members["administrativeArea"] = placemark.administrativeArea.map(JSONValue.string)
        members["isoCountryCode"] = placemark.isoCountryCode.map(JSONValue.string)
        members["country"] = placemark.country.map(JSONValue.string)
        if let timeZone {
            members["timeZone"] = self.timeZone(timeZone)
        } else if let identifier = placemark.timeZone {
            members["timeZone"] = ["identifier": .string(identifier)]
        }
        if let distance = placemark.distance, distance.isFinite { members["distance"] = .double(distance.rounded()) }
        if let bearing = placemark.bearing, bearing.isFinite {
            members["bearing"] = .double((bearing * 10).rounded() / 10)
        }
        return .object(members)
    }

    /// A country; `localizedName` only when the request named a locale and
    /// iso-codes has a translation.
    public static func country(_ country: Country) -> JSONValue {
        var members: [String: JSONValue] = [
            "code": .string(country.code), "name": .string(country.name), "flag": .string(country.flag),
        ]
        if !country.alpha3.isEmpty { members["alpha3"] = .string(country.alpha3) }
        if !country.numeric.isEmpty { members["numeric"] = .string(country.numeric) }
        members["officialName"] = country.officialName.map(JSONValue.string)
        members["commonName"] = country.commonName.map(JSONValue.string)
        members["localizedName"] = country.localizedName.map(JSONValue.string)
        members["phoneCode"] = country.phoneCode.map(JSONValue.string)
        return .object(members)
    }

    public static func timeZone(_ zone: TimeZoneInfo) -> JSONValue {
        [
            "identifier": .string(zone.identifier), "abbreviation": .string(zone.abbreviation),
            "secondsFromGMT": .int(Int64(zone.secondsFromGMT)),
            "isDaylightSavingTime": .bool(zone.isDaylightSavingTime),
        ]
    }

    public static func coordinate(_ coordinate: Coordinate) -> JSONValue {
        ["latitude": .double(coordinate.latitude), "longitude": .double(coordinate.longitude)]
    }

    /// The three derived values of a description, as the `myPlacemark`,
    /// `country` and `timeZone` key paths carry them (`null` when unknown).
    public static func keyPathValues(_ description: GeoLookups.Description) -> (
        placemark: JSONValue, country: JSONValue, timeZone: JSONValue
    ) {
        (
            placemark(description.placemark, timeZone: description.timeZone),
            description.country.map(country) ?? .null,
            description.timeZone.map(timeZone) ?? .null
        )
    }

    // The readers, for clients (`Visit(json:)`): each the inverse of its
    // writer above, without what the writer derives.

    static func coordinate(wire object: WireObject) throws(DaemonStatus.FormatError) -> Coordinate {
        let latitude = try object.double("latitude")
        guard latitude.isFinite, abs(latitude) <= 90 else { throw object.invalid("latitude", "is not from -90 to 90") }
        let longitude = try object.double("longitude")
        guard longitude.isFinite, abs(longitude) <= 180 else {
            throw object.invalid("longitude", "is not from -180 to 180")
        }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    static func placemark(wire object: WireObject) throws(DaemonStatus.FormatError) -> Placemark {
        // The writer's `timeZone` is an object; CLPlacemark keeps its identifier.
        Placemark(
            name: try object.optionalString("name"), locality: try object.optionalString("locality"),
            subAdministrativeArea: try object.optionalString("subAdministrativeArea"),
            administrativeArea: try object.optionalString("administrativeArea"),
            isoCountryCode: try object.optionalString("isoCountryCode"), country: try object.optionalString("country"),
            timeZone: try zone(object),
            coordinate: try coordinate(wire: object.object("coordinate")),
            distance: try object.optionalDouble("distance"),
            bearing: try object.optionalDouble("bearing"))
    }

    private static func zone(_ placemark: WireObject) throws(DaemonStatus.FormatError) -> String? {
        guard let zone = try placemark.optionalObject("timeZone") else { return nil }
        return try zone.string("identifier")
    }

    static func country(wire object: WireObject) throws(DaemonStatus.FormatError) -> Country {
        Country(
            code: try object.string("code"), alpha3: try object.optionalString("alpha3") ?? "",
            numeric: try object.optionalString("numeric") ?? "", name: try object.string("name"),
            officialName: try object.optionalString("officialName"),
            commonName: try object.optionalString("commonName"),
            localizedName: try object.optionalString("localizedName"), phoneCode: try object.optionalString("phoneCode")
        )
    }

    static func timeZone(wire object: WireObject) throws(DaemonStatus.FormatError) -> TimeZoneInfo {
        TimeZoneInfo(
            identifier: try object.string("identifier"), abbreviation: try object.string("abbreviation"),
            secondsFromGMT: try object.int("secondsFromGMT"),
            isDaylightSavingTime: try object.bool("isDaylightSavingTime"))
    }
}
