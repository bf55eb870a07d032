import AklocCore
import AklocJSON
import AklocProtocol

/// `akloc country [CODE | +PHONE | NAME…] [--locale L] [--json]`
struct CountryCommand: Command {
    static let name = "country"
    static let abstract = "Show the current country and time zone, or look countries up"
    static let usage = "country [CODE | +PHONE | NAME…] [--locale L] [--json]"
    static let details = """
        Arguments:
          (none)          the country and time zone of the current fix
          CODE            ISO 3166-1 alpha-2 or alpha-3, any case: gb, GBR
          +PHONE          every country with that calling code: +1, +7, 44
          NAME…           the start of any word of any of its names: neth, "united k"

        Options:
          --locale L      names in that language too (iso-codes' translations): de, pt_BR
          --json          print the daemon's countries as JSON (docs/countries.md)

        A two- or three-letter argument that is no country's code is searched as a name.
        """

    var words: [String]
    var locale: String?
    var json = false

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: ["--locale"], flags: ["--json"])
        words = scanner.positionals
        locale = scanner.value("--locale")
        json = scanner.flag("--json")
    }

    func validate() throws(CLIError) {
        if let locale, locale.isEmpty { throw .usage("--locale needs a locale name such as de") }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        guard !words.isEmpty else { return try current(connection) }
        let text = words.joined(separator: " ")
        let isCode = words.count == 1 && (2...3).contains(text.utf8.count) && text.utf8.allSatisfy(Self.isLetter)
        let isPhone = words.count == 1 && (text.hasPrefix("+") || text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 })
        func lookUp(_ selector: CountrySelector) throws(CLIError) -> [JSONValue] {
            try connection.call(.geo(.countries(selector, locale: locale)))["countries"]?.arrayValue ?? []
        }
        var countries: [JSONValue] = []
        if isCode {
            countries = try lookUp(.code(text))
        } else if isPhone {
            countries = try lookUp(.phoneCode(text))
        }
        if countries.isEmpty && !isPhone {
            countries = try lookUp(.query(text))
        }
        if json {
            Output.line(bytes: JSONValue.array(countries).jsonBytes)
        } else {
            for country in countries { Output.line(GeoFormatting.country(country)) }
        }
        if countries.isEmpty {
            Output.error("no country matches '\(text)'")
            return ExitCode.failure
        }
        return ExitCode.ok
    }

    /// The fix's country and zone, from the `country` and `timeZone` key paths.
    private func current(_ connection: DaemonConnection) throws(CLIError) -> Int32 {
        let country = try connection.call(.engine(.get(AklocCore.KeyPath(.country))))
        let zone = try connection.call(.engine(.get(AklocCore.KeyPath(.timeZone))))
        if json {
            Output.line(bytes: JSONValue.object(["country": country, "timeZone": zone]).jsonBytes)
            return ExitCode.ok
        }
        if country == .null && zone == .null {
            Output.error("no current fix")
            return ExitCode.failure
        }
        Output.line(country == .null ? "no country (at sea)" : GeoFormatting.country(country))
        if zone != .null { Output.line("time zone \(GeoFormatting.timeZone(zone))") }
        return ExitCode.ok
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }
}
