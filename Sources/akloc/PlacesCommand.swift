import AklocJSON
import AklocProtocol

/// `akloc places`, `akloc places add NAME [--at LAT,LON] [--radius M] [--note TEXT] [--shared]`,
/// `akloc places rm NAME`
struct PlacesCommand: Command {
    static let name = "places"
    static let abstract = "List, add or remove saved places (regions)"
    static let usage = "places [add NAME [--at LAT,LON] [--radius M] [--note TEXT] [--shared] | rm NAME] [--json]"
    static let details = """
        Without a subcommand, lists your saved places and the shared ones, one a line:
        name, coordinate, radius, and who it belongs to.

        Subcommands:
          add NAME        saves NAME (1-64 characters); saving a name again replaces it
          rm NAME         deletes your place NAME

        Options:
          --at LAT,LON    where, in decimal degrees (default: the current fix, which needs
                          authorization)
          --radius M      the region's radius in metres, 1 to 100000 (default 100)
          --note TEXT     a note kept with the place
          --shared        visible to every user (root or the admin group only)
          --json          print the daemon's reply as JSON instead

        `akloc watch regions` then reports entering and leaving them.
        """

    enum Action: Equatable {
        case list
        case add(PlaceDraft)
        case remove(String)
    }

    var action: Action
    var json: Bool

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(
            arguments, options: ["--at", "--radius", "--note"], flags: ["--shared", "--json"])
        json = scanner.flag("--json")
        let words = scanner.positionals
        let addOnly =
            ["--at", "--radius", "--note"].filter { scanner.value($0) != nil }
            + (scanner.flag("--shared") ? ["--shared"] : [])
        switch words.first {
        case nil, "list"?:
            guard words.count <= 1 else { throw .usage("places takes no NAME without add or rm") }
            guard addOnly.isEmpty else { throw .usage("\(addOnly[0]) applies to places add") }
            action = .list
        case "add"?:
            guard words.count == 2 else { throw .usage("usage: akloc places add NAME [--at LAT,LON] [--radius M]") }
            var draft = PlaceDraft(name: words[1], note: scanner.value("--note"), shared: scanner.flag("--shared"))
            if let at = scanner.value("--at") {
                let parts = at.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
                    latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180
                else {
                    throw .usage(
                        "--at needs LAT,LON in degrees (latitude within ±90, longitude within ±180), not '\(at)'")
                }
                draft.latitude = latitude
                draft.longitude = longitude
            }
            draft.radius = try scanner.number("--radius", unit: "metres", allowZero: false)
            action = .add(draft)
        case "rm"?, "remove"?:
            guard words.count == 2 else { throw .usage("usage: akloc places rm NAME") }
            guard addOnly.isEmpty else { throw .usage("\(addOnly[0]) applies to places add") }
            action = .remove(words[1])
        case let word?:
            throw .usage("unknown places subcommand '\(word)' (expected add or rm)")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let result: JSONValue
        switch action {
        case .list: result = try connection.call(.places(.places))
        case .add(let draft): result = try connection.call(.places(.savePlace(draft)))
        case .remove(let name): result = try connection.call(.places(.deletePlace(name: name)))
        }
        if json {
            Output.line(bytes: result.jsonBytes)
            return ExitCode.ok
        }
        switch action {
        case .list:
            for place in result["places"]?.arrayValue ?? [] { Output.line(Self.line(place)) }
        case .add:
            if let place = result["place"] { Output.line("saved " + Self.line(place)) }
        case .remove(let name):
            Output.line("removed \(name)")
        }
        return ExitCode.ok
    }

    /// `Haven  52.70330 N  5.29170 E  100 m  uid 1000, shared  — note`
    static func line(_ place: JSONValue) -> String {
        var text = place["name"]?.stringValue ?? "?"
        if let latitude = place["coordinate"]?["latitude"]?.doubleValue,
            let longitude = place["coordinate"]?["longitude"]?.doubleValue
        {
            text += "  " + Formatting.coordinate(latitude: latitude, longitude: longitude)
        }
        if let radius = place["radius"]?.doubleValue { text += "  \(Formatting.fixed(radius, radius < 10 ? 1 : 0)) m" }
        if let owner = place["owner"]?.doubleValue { text += "  uid \(Int(owner))" }
        if place["shared"]?.boolValue == true { text += ", shared" }
        if let note = place["note"]?.stringValue, !note.isEmpty { text += "  — \(note)" }
        return text
    }
}
