import AklocJSON
import AklocProtocol

/// `akloc where [--at LAT,LON] [--json]`
struct WhereCommand: Command {
    static let name = "where"
    static let abstract = "Say where the current fix is: place, country, time zone"
    static let usage = "where [--at LAT,LON] [--json]"
    static let details = """
        Options:
          --at LAT,LON    describe this point instead of the current fix (needs no authorization)
          --json          print the daemon's placemark as JSON (docs/places.md)

        Prints the address ("3 km NE of Enkhuizen, North Holland, Netherlands"), the nearest
        place, the country with its flag and calling code, and the time zone with its offset.
        """

    var at: GeoPoint?
    var json = false

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: ["--at"], flags: ["--json"])
        guard scanner.positionals.isEmpty else { throw .usage("where takes no arguments") }
        at = try scanner.value("--at").map { (text) throws(CLIError) in try GeoArguments.point(text, option: "--at") }
        json = scanner.flag("--json")
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let result = try connection.call(.geo(.reverseGeocode(coordinate: at)))
        let placemark = result["placemark"] ?? .null
        if json {
            Output.line(bytes: placemark.jsonBytes)
            return ExitCode.ok
        }
        Output.line(placemark["formattedAddress"]?.stringValue ?? "?")
        if let locality = placemark["locality"]?.stringValue {
            var line = "  place      \(locality)"
            if let distance = placemark["distance"]?.doubleValue { line += ", \(GeoFormatting.kilometres(distance))" }
            if let bearing = placemark["bearing"]?.doubleValue { line += " at \(Int(bearing.rounded()))° from it" }
            Output.line(line)
        }
        if let code = placemark["isoCountryCode"]?.stringValue {
            let countries = try connection.call(.geo(.countries(.code(code), locale: nil)))["countries"]?.arrayValue
            if let country = countries?.first {
                Output.line("  country    \(GeoFormatting.country(country))")
            } else {
                Output.line("  country    \(placemark["country"]?.stringValue ?? code)")
            }
        } else {
            Output.line("  country    none (at sea)")
        }
        if let zone = placemark["timeZone"] { Output.line("  time zone  \(GeoFormatting.timeZone(zone))") }
        return ExitCode.ok
    }
}

/// The geo commands' shared argument forms.
enum GeoArguments {
    /// `LAT,LON` in decimal degrees.
    static func point(_ text: String, option: String) throws(CLIError) -> GeoPoint {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
            latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180
        else {
            throw .usage("\(option) needs LAT,LON in degrees (latitude within ±90, longitude ±180), not '\(text)'")
        }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }
}
