import AklocCore
import AklocJSON

extension SkyView {
    /// The most satellites a value may list: gpsd's MAXCHANNELS is 184.
    public static let maximumSatellites = 256

    /// Reads a wire `satellites` value (docs/protocol.md §7), the one reader
    /// of it: `visible`, `used` and `satellites` are required; every other
    /// member is optional but must have its type and range when present.
    /// The error names the member at fault, prefixed with `field`.
    public init(wire json: JSONValue, field: String = "satellites") throws(ProtocolError) {
        guard case .object(let members) = json else {
            throw ProtocolError(.badRequest, "\"\(field)\" must be an object, not \(json.typeName)")
        }
        func fail(_ name: String, _ expected: String, in object: [String: JSONValue], path: String) -> ProtocolError {
            guard let value = object[name] else { return ProtocolError(.badRequest, "missing \"\(path).\(name)\"") }
            let found = value.doubleValue != nil ? value.jsonString : value.typeName
            return ProtocolError(.badRequest, "\"\(path).\(name)\" must be \(expected), not \(found)")
        }
        func count(_ key: String, in object: [String: JSONValue], path: String) throws(ProtocolError) -> Int? {
            guard let value = object[key] else { return nil }
            guard let number = value.doubleValue, number >= 0, number <= 1000, number == number.rounded() else {
                throw fail(key, "a whole number from 0 to 1000", in: object, path: path)
            }
            return Int(number)
        }
        func number(
            _ key: String, in object: [String: JSONValue], path: String, _ range: ClosedRange<Double>
        ) throws(ProtocolError) -> Double? {
            guard let value = object[key] else { return nil }
            guard let number = value.doubleValue, range.contains(number) else {
                throw fail(key, "a number from \(range.lowerBound) to \(range.upperBound)", in: object, path: path)
            }
            return number
        }
        func time(_ key: String) throws(ProtocolError) -> FixTime? {
            guard let value = members[key] else { return nil }
            guard let time = value.stringValue.flatMap(FixTime.init(iso8601:)) else {
                throw fail(key, "an ISO 8601 UTC time", in: members, path: field)
            }
            return time
        }
        guard let visible = try count("visible", in: members, path: field) else {
            throw ProtocolError(.badRequest, "missing \"\(field).visible\"")
        }
        guard let used = try count("used", in: members, path: field) else {
            throw ProtocolError(.badRequest, "missing \"\(field).used\"")
        }
        var device: String?
        if let value = members["device"] {
            guard let text = value.stringValue else { throw fail("device", "a string", in: members, path: field) }
            device = text
        }
        guard case .array(let list)? = members["satellites"] else {
            throw fail("satellites", "an array", in: members, path: field)
        }
        guard list.count <= SkyView.maximumSatellites else {
            throw ProtocolError(
                .badRequest,
                "\"\(field).satellites\" lists \(list.count) satellites, more than \(SkyView.maximumSatellites)")
        }
        var satellites: [Satellite] = []
        satellites.reserveCapacity(list.count)
        for (position, item) in list.enumerated() {
            let path = "\(field).satellites[\(position)]"
            guard case .object(let object) = item else {
                throw ProtocolError(.badRequest, "\"\(path)\" must be an object, not \(item.typeName)")
            }
            guard let prn = try count("prn", in: object, path: path) else {
                throw ProtocolError(.badRequest, "missing \"\(path).prn\"")
            }
            var constellation: Constellation?
            if let value = object["constellation"] {
                guard let text = value.stringValue else {
                    throw fail("constellation", "a string", in: object, path: path)
                }
                // One a newer daemon knows and this reader does not is unknown.
                constellation = Constellation(rawValue: text)
            }
            guard case .bool(let isUsed)? = object["used"] else {
                throw fail("used", "true or false", in: object, path: path)
            }
            satellites.append(
                Satellite(
                    prn: prn, constellation: constellation, svid: try count("svid", in: object, path: path),
                    elevation: try number("elevation", in: object, path: path, -90...90),
                    azimuth: try number("azimuth", in: object, path: path, 0...360),
                    signal: try number("signal", in: object, path: path, 0...1000), used: isUsed))
        }
        func dop(_ key: String) throws(ProtocolError) -> Double? {
            try number(key, in: members, path: field, 0...100_000)
        }
        self.init(
            visible: visible, used: used,
            dilutions: Dilutions(
                hdop: try dop("hdop"), vdop: try dop("vdop"), pdop: try dop("pdop"), tdop: try dop("tdop"),
                gdop: try dop("gdop"), xdop: try dop("xdop"), ydop: try dop("ydop")),
            satellites: satellites, device: device, timestamp: try time("timestamp"),
            receivedAt: try time("receivedAt"))
    }
}
