import AklocCore
import AklocJSON
import AklocProtocol

/// Human lines for the geo commands (`where`, `search`, `country`) and the
/// place note of `watch --human`, from the wire forms in docs/places.md.
enum GeoFormatting {
    /// `🇳🇱 Netherlands [NL NLD 528], calling code +31`; the localized name first when asked for.
    static func country(_ country: JSONValue) -> String {
        let name = country["name"]?.stringValue ?? "?"
        var text = [
            country["flag"]?.stringValue, country["localizedName"]?.stringValue.map { "\($0) (\(name))" } ?? name,
        ]
        .compactMap { $0 }.joined(separator: " ")
        let codes = [country["code"], country["alpha3"], country["numeric"]].compactMap { $0?.stringValue }
        text += " [\(codes.joined(separator: " "))]"
        if let phone = country["phoneCode"]?.stringValue { text += ", calling code \(phone)" }
        return text
    }

    /// `Europe/Amsterdam, CEST, UTC+02:00`.
    static func timeZone(_ zone: JSONValue) -> String {
        var parts = [zone["identifier"]?.stringValue ?? "?"]
        if let abbreviation = zone["abbreviation"]?.stringValue { parts.append(abbreviation) }
        if let seconds = zone["secondsFromGMT"]?.doubleValue { parts.append(offset(Int(seconds))) }
        return parts.joined(separator: ", ")
    }

    /// `UTC+05:30`, `UTC-03:00`, `UTC`.
    static func offset(_ seconds: Int) -> String {
        guard seconds != 0 else { return "UTC" }
        let minutes = abs(seconds) / 60
        let hours = minutes / 60
        return
            "UTC\(seconds < 0 ? "-" : "+")\(hours < 10 ? "0" : "")\(hours):\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)"
    }

    /// `Enkhuizen, North Holland, Netherlands  52.70333 N  5.29167 E  3.2 km`.
    static func searchResult(_ placemark: JSONValue) -> String {
        var parts = [address(placemark)]
        if let latitude = placemark["coordinate"]?["latitude"]?.doubleValue,
            let longitude = placemark["coordinate"]?["longitude"]?.doubleValue
        {
            parts.append(Formatting.coordinate(latitude: latitude, longitude: longitude))
        }
        if let distance = placemark["distance"]?.doubleValue { parts.append(kilometres(distance)) }
        return parts.joined(separator: "  ")
    }

    /// The place itself: name, province, country (a search result has no offset from it).
    static func address(_ placemark: JSONValue) -> String {
        [placemark["name"], placemark["administrativeArea"], placemark["country"] ?? placemark["isoCountryCode"]]
            .compactMap { $0?.stringValue }.reduce(into: [String]()) { parts, part in
                if parts.last != part { parts.append(part) }
            }
            .joined(separator: ", ")
    }

    /// A `change` of `myPlacemark`, `country` or `timeZone` for `watch --human`:
    /// `country = 🇩🇪 Germany [DE DEU 276], calling code +49`; nil for other paths.
    static func change(_ change: ServerEvent.Change) -> String? {
        let new = change.new
        let text: String
        switch change.keyPath.root {
        case .myPlacemark: text = new["formattedAddress"]?.stringValue ?? "none"
        case .country: text = new == .null ? "none (at sea)" : country(new)
        case .timeZone: text = new == .null ? "none" : timeZone(new)
        default: return nil
        }
        return "\(change.keyPath) = \(text)"
    }

    static func kilometres(_ metres: Double) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : "\(Formatting.fixed(metres / 1000, 1)) km"
    }
}
