import AklocCore
import AklocJSON

extension Location {
    /// Reads a wire location object (docs/protocol.md §6), the one reader of
    /// it: `latitude`, `longitude` and `mode` are required; every other
    /// member is optional, but one that is there must have its type (a number,
    /// an ISO 8601 time, a string). Members it does not know are ignored.
    /// The error names the member at fault, prefixed with `field`.
    public init(wire json: JSONValue, field: String = "location") throws(ProtocolError) {
        guard case .object(let members) = json else {
            throw ProtocolError(.badRequest, "\"\(field)\" must be a location object, not \(json.typeName)")
        }
        func fail(_ key: String, _ expected: String) -> ProtocolError {
            guard let value = members[key] else { return ProtocolError(.badRequest, "missing \"\(field).\(key)\"") }
            let found = value.doubleValue != nil ? value.jsonString : value.typeName
            return ProtocolError(.badRequest, "\"\(field).\(key)\" must be \(expected), not \(found)")
        }
        func number(_ key: String) throws(ProtocolError) -> Double? {
            guard let value = members[key] else { return nil }
            guard let number = value.doubleValue else { throw fail(key, "a number") }
            return number
        }
        func time(_ key: String) throws(ProtocolError) -> FixTime? {
            guard let value = members[key] else { return nil }
            guard let time = value.stringValue.flatMap(FixTime.init(iso8601:)) else {
                throw fail(key, "an ISO 8601 UTC time")
            }
            return time
        }
        guard let latitude = try number("latitude"), abs(latitude) <= 90 else {
            throw fail("latitude", "a number of degrees within ±90")
        }
        guard let longitude = try number("longitude"), abs(longitude) <= 180 else {
            throw fail("longitude", "a number of degrees within ±180")
        }
        guard let mode = members["mode"]?.stringValue.flatMap(Mode.init(rawValue:)) else {
            throw fail("mode", "\"2d\" or \"3d\"")
        }
        var device: String?
        if let value = members["device"] {
            guard let text = value.stringValue else { throw fail("device", "a string") }
            device = text
        }
        var fixStatus: FixStatus?
        if let value = members["fixStatus"] {
            guard let text = value.stringValue else { throw fail("fixStatus", "a string") }
            // A status a newer daemon knows and this reader does not is unknown, not an error.
            fixStatus = FixStatus(rawValue: text)
        }
        var satellitesUsed: Int?
        if let value = members["satellitesUsed"] {
            guard let number = value.doubleValue, number >= 0, number <= 1000, number == number.rounded() else {
                throw fail("satellitesUsed", "a whole number from 0 to 1000")
            }
            satellitesUsed = Int(number)
        }
        self.init(
            latitude: latitude, longitude: longitude, mode: mode, altitude: try number("altitude"),
            ellipsoidalAltitude: try number("ellipsoidalAltitude"),
            horizontalAccuracy: try number("horizontalAccuracy"), verticalAccuracy: try number("verticalAccuracy"),
            speed: try number("speed"), speedAccuracy: try number("speedAccuracy"), course: try number("course"),
            courseAccuracy: try number("courseAccuracy"), climb: try number("climb"), timestamp: try time("timestamp"),
            receivedAt: try time("receivedAt"), device: device, fixStatus: fixStatus,
            satellitesUsed: satellitesUsed, hdop: try number("hdop"))
    }

    /// `init(wire:)`, or nil where it refuses the object.
    public init?(json: JSONValue) {
        guard let location = try? Location(wire: json) else { return nil }
        self = location
    }
}
