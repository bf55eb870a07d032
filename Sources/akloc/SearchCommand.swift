import AklocJSON
import AklocProtocol

/// `akloc search QUERY… [--within KM] [--near LAT,LON] [--limit N] [--json]`
struct SearchCommand: Command {
    static let name = "search"
    static let abstract = "Find places by name near the current fix (or a point)"
    static let usage = "search QUERY… [--within KM] [--near LAT,LON] [--limit N] [--json]"
    static let details = """
        Arguments:
          QUERY…          the start of any word of a place's name or of its alternate names,
                          any case, with or without accents ("zurich", "den haag", "sao paulo")

        Options:
          --within KM     only places within KM kilometres (default 10; 0: anywhere)
          --near LAT,LON  measure from this point instead of the current fix
          --limit N       at most N places, 1 to 100 (default 10)
          --json          print the daemon's result as JSON (docs/places.md)

        Best match first, then nearest, then the most populous. Without --near and without a
        current fix, searches everywhere.
        """

    var query: String
    var within: Double?
    var near: GeoPoint?
    var limit: Int?
    var json = false

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: ["--within", "--near", "--limit"], flags: ["--json"])
        guard !scanner.positionals.isEmpty else { throw .usage("search needs a QUERY") }
        query = scanner.positionals.joined(separator: " ")
        within = try scanner.number("--within", unit: "kilometres").map { $0 * 1000 }
        near = try scanner.value("--near").map { (text) throws(CLIError) in
            try GeoArguments.point(text, option: "--near")
        }
        if let text = scanner.value("--limit") {
            guard let number = Int(text) else { throw .usage("--limit needs a whole number 1 to 100, not '\(text)'") }
            limit = number
        }
        json = scanner.flag("--json")
    }

    func validate() throws(CLIError) {
        if let limit, !(1...GeoRequest.maximumLimit).contains(limit) {
            throw .usage("--limit needs a whole number 1 to \(GeoRequest.maximumLimit), not \(limit)")
        }
        if let within, within > GeoRequest.maximumWithin {
            throw .usage("--within is at most \(Int(GeoRequest.maximumWithin / 1000)) km")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let request = GeoRequest.searchPlaces(
            query: query, near: near, within: within ?? GeoRequest.defaultWithin,
            limit: limit ?? GeoRequest.defaultLimit)
        let result = try connection.call(.geo(request))
        if json {
            Output.line(bytes: result.jsonBytes)
            return ExitCode.ok
        }
        let places = result["places"]?.arrayValue ?? []
        for place in places { Output.line(GeoFormatting.searchResult(place["placemark"] ?? .null)) }
        if places.isEmpty {
            Output.error("no place matches '\(query)'\(within == 0 ? "" : " within the distance (try --within 0)")")
            return ExitCode.failure
        }
        return ExitCode.ok
    }
}
