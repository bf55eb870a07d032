import AklocTestSupport
import Foundation
import Testing

/// The geo lookups served by the real aklocd (docs/places.md,
/// docs/countries.md): a real gpsd replaying the IJsselmeer boat trip, the
/// CLI, and country lookups checked against iso-codes and phonenumbers
/// (Debian's python3-phonenumbers, which the lookups do not read).
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct GeoLookupTests {
    static let dataConfig = "[geo]\ndata-dir = \(Binaries.packageRoot.appendingPathComponent("data").path)\n"
    /// Every epoch: the replay runs at 50 times its speed.
    static var everyEpoch: [String: Any] { ["minInterval": 0, "maxInterval": 0, "updateSpeed": 0] }

    static func akloc(_ arguments: [String]) throws -> (code: Int32?, out: String, err: String) {
        let process = try TestProcess(Binaries.akloc, arguments)
        defer { process.kill() }
        let code = process.waitForExit(timeout: 30)
        return (code, process.stdout(), process.stderr())
    }

    /// The boat off Enkhuizen (bundg_zeus_9), looped so fixes keep coming.
    @Test func theIJsselmeerTripIsNearEnkhuizenOrAndijk() throws {
        guard LiveReplay.requireTools() else { return }
        let fake = try GPSFake.start(log: LiveReplay.bundled("bundg_zeus_9"), cycle: 0.004, loop: true)
        defer { fake.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port, config: Self.dataConfig)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        for keyPath in ["myPlacemark", "country", "timeZone"] {
            let reply = try client.request(
                "observe", ["keyPath": keyPath, "options": ["old"], "policy": Self.everyEpoch])
            #expect(reply.ok == true, "\(keyPath): \(reply)")
        }
        var changes: [String: [[String: Any]]] = [:]
        let deadline = Date().addingTimeInterval(60)
        while (changes["myPlacemark"]?.count ?? 0) < 20, Date() < deadline {
            let message = try client.readMessage(timeout: 30)
            guard message.event == "change", let keyPath = message["keyPath"] as? String else { continue }
            changes[keyPath, default: []].append(message)
        }
        let placemarks = (changes["myPlacemark"] ?? []).compactMap { $0["new"] as? [String: Any] }
        #expect(placemarks.count >= 20, "placemark changes: \(changes["myPlacemark"]?.count ?? 0)")
        for placemark in placemarks {
            #expect(["Enkhuizen", "Andijk"].contains(placemark["locality"] as? String ?? ""), "\(placemark)")
            #expect(placemark["administrativeArea"] as? String == "North Holland")
            #expect(placemark["isoCountryCode"] as? String == "NL")
            #expect(placemark["country"] as? String == "Netherlands")
            let zone = placemark["timeZone"] as? [String: Any]
            #expect(zone?["identifier"] as? String == "Europe/Amsterdam")
            let address = placemark["formattedAddress"] as? String ?? ""
            #expect(address.hasSuffix(" of \(placemark["locality"] as? String ?? "?"), North Holland, Netherlands"))
            #expect((placemark["distance"] as? Double ?? .infinity) < 15_000)
        }
        // The whole trip is in one country and one zone: the first fix gives
        // each its value (from null), and nothing flaps after that.
        let countries = changes["country"] ?? []
        #expect(countries.count == 1, "\(countries)")
        #expect((countries.first?["new"] as? [String: Any])?["code"] as? String == "NL")
        #expect(countries.first?["old"] is NSNull)
        #expect(((countries.first?["new"] as? [String: Any])?["phoneCode"]) as? String == "+31")
        let zones = changes["timeZone"] ?? []
        #expect(zones.count == 1, "\(zones.map { ($0["new"] ?? "", $0["old"] ?? "") })")
        let zone = zones.first?["new"] as? [String: Any]
        #expect(zone?["identifier"] as? String == "Europe/Amsterdam")
        // The offset is the zone's now (not the capture's August), as Foundation's tz code has it.
        let amsterdam = TimeZone(identifier: "Europe/Amsterdam")!
        let offset = amsterdam.secondsFromGMT(for: Date())
        let abbreviation = offset == 7200 ? "CEST" : "CET"
        #expect(zone?["abbreviation"] as? String == abbreviation && zone?["secondsFromGMT"] as? Int == offset)
        #expect(zone?["isDaylightSavingTime"] as? Bool == amsterdam.isDaylightSavingTime(for: Date()))
        let utc = offset == 7200 ? "UTC+02:00" : "UTC+01:00"

        // The CLI says the same.
        let socket = ["--socket", daemon.socketPath]
        let whereRun = try Self.akloc(socket + ["where"])
        #expect(whereRun.code == 0, "\(whereRun)")
        #expect(
            whereRun.out.contains(" of Andijk, North Holland, Netherlands")
                || whereRun.out.contains(" of Enkhuizen, North Holland, Netherlands"), "\(whereRun.out)")
        #expect(whereRun.out.contains("🇳🇱 Netherlands [NL NLD 528], calling code +31"), "\(whereRun.out)")
        #expect(whereRun.out.contains("Europe/Amsterdam, \(abbreviation), \(utc)"), "\(whereRun.out)")
        let countryRun = try Self.akloc(socket + ["country"])
        #expect(countryRun.code == 0 && countryRun.out.contains("🇳🇱 Netherlands"), "\(countryRun)")
        #expect(countryRun.out.contains("time zone Europe/Amsterdam, \(abbreviation), \(utc)"), "\(countryRun)")
        let watch = try TestProcess(Binaries.akloc, socket + ["watch", "--human", "--min", "0", "--max", "1"])
        defer { watch.kill() }
        let named = CLIAgainstDaemonTests.lines(of: watch, count: 3) {
            $0.hasSuffix("near Andijk") || $0.hasSuffix("near Enkhuizen")
        }
        #expect(named.count >= 3, "watch --human printed: \(watch.stdout()) \(watch.stderr())")
        watch.signal(SIGINT)
        #expect(watch.waitForExit(timeout: 10) == 0)
        let derived = try TestProcess(Binaries.akloc, socket + ["watch", "country", "myPlacemark", "--human"])
        defer { derived.kill() }
        let lines = CLIAgainstDaemonTests.lines(of: derived, count: 2) {
            $0.hasSuffix("country = 🇳🇱 Netherlands [NL NLD 528], calling code +31")
                || $0.contains("myPlacemark = ") && $0.hasSuffix(", North Holland, Netherlands")
        }
        #expect(lines.count >= 2, "watch country myPlacemark --human printed: \(derived.stdout())")
        derived.signal(SIGINT)
        _ = derived.waitForExit(timeout: 10)
        #expect(try client.request("status").ok == true)
    }

    /// NMEA for a drive east along 52.215° N from Enschede (NL) to Gronau
    /// (DE), one epoch (RMC + GGA) per 0.002° of longitude, a second apart.
    static func borderDrive() -> String {
        func sentence(_ body: String) -> String {
            let checksum = body.utf8.reduce(UInt8(0), ^)
            return "$\(body)*\(String(format: "%02X", checksum))\r\n"
        }
        var log = ""
        for step in 0..<60 {
            let longitude = 6.90 + Double(step) * 0.002
            let degrees = Int(longitude)
            let east = String(format: "%03d%07.4f", degrees, (longitude - Double(degrees)) * 60)
            let time = String(format: "1200%02d.00", step)
            log += sentence("GPRMC,\(time),A,5212.9000,N,\(east),E,10.0,90.0,200818,,,A")
            log += sentence("GPGGA,\(time),5212.9000,N,\(east),E,1,08,0.9,40.0,M,46.0,M,,")
        }
        return log
    }

    /// A real gpsd replays the drive: `country` and `timeZone` change once,
    /// where the fix crosses the border, and not again until the replay
    /// loops back to the Dutch side.
    @Test func crossingTheBorderChangesCountryAndZoneOnce() throws {
        guard LiveReplay.requireTools() else { return }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("akloc-border-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let logPath = scratch.appendingPathComponent("enschede-gronau.log").path
        try Self.borderDrive().write(toFile: logPath, atomically: true, encoding: .utf8)
        let fake = try GPSFake.start(log: logPath, cycle: 0.02, loop: true)
        defer { fake.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port, config: Self.dataConfig)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        for keyPath in ["myLocation.longitude", "country", "timeZone"] {
            #expect(
                try client.request("observe", ["keyPath": keyPath, "options": ["old"], "policy": Self.everyEpoch]).ok
                    == true)
        }
        // Each change with the longitude of the epoch it came with.
        var longitude = 0.0
        var changes: [(keyPath: String, code: String?, longitude: Double)] = []
        let deadline = Date().addingTimeInterval(60)
        while changes.filter({ $0.keyPath == "country" }).count < 3, Date() < deadline {
            let message = try client.readMessage(timeout: 30)
            guard message.event == "change", let keyPath = message["keyPath"] as? String else { continue }
            if keyPath == "myLocation.longitude" {
                longitude = message["new"] as? Double ?? 0
                continue
            }
            let new = message["new"] as? [String: Any]
            changes.append((keyPath, (new?["code"] ?? new?["identifier"]) as? String, longitude))
        }
        let countries = changes.filter { $0.keyPath == "country" }
        #expect(countries.map(\.code) == ["NL", "DE", "NL"], "\(changes)")
        guard countries.count == 3 else { return }
        // Into Germany between Glanerbrug (6.97° E, NL) and Gronau (7.02° E, DE);
        // back to the Netherlands only at the start of the next loop.
        #expect(countries[1].longitude > 6.96 && countries[1].longitude < 7.02, "\(countries)")
        #expect(countries[2].longitude < 6.92, "no flapping at the border: \(countries)")
        // The zone changes with the country, in the same epoch.
        let zones = changes.filter { $0.keyPath == "timeZone" }
        #expect(zones.prefix(2).map(\.code) == ["Europe/Amsterdam", "Europe/Berlin"], "\(changes)")
        #expect(zones.dropFirst().first?.longitude == countries[1].longitude, "\(changes)")
    }

    /// phonenumbers' region codes per calling code, from the Debian package.
    static func phonenumbers() throws -> [String: Int] {
        let script = """
            import json, phonenumbers
            print(json.dumps({r: c for c, rs in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.items() for r in rs}))
            """
        let process = try TestProcess("/usr/bin/python3", ["-c", script])
        defer { process.kill() }
        #expect(process.waitForExit(timeout: 30) == 0, "python3-phonenumbers: \(process.stderr())")
        return try JSONSerialization.jsonObject(with: Data(process.stdout().utf8)) as? [String: Int] ?? [:]
    }

    static func isoCodes() throws -> [[String: String]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/iso-codes/json/iso_3166-1.json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: [[String: String]]]
        return object?["3166-1"] ?? []
    }

    @Test func countriesAgreeWithIsoCodesAndPhonenumbers() throws {
        let daemon = try DaemonProcess(gpsdPort: 1, config: Self.dataConfig)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        func countries(_ arguments: [String: Any]) throws -> [[String: Any]] {
            let reply = try client.request("countries", arguments)
            #expect(reply.ok == true, "\(arguments): \(reply)")
            return (reply.result as? [String: Any])?["countries"] as? [[String: Any]] ?? []
        }
        let regions = try Self.phonenumbers()
        let iso = try Self.isoCodes()
        #expect(iso.count >= 249 && regions.count >= 240)

        // Every ISO country, by its code: iso-codes' names and codes, phonenumbers' calling code.
        var mismatches: [String] = []
        for entry in iso {
            let code = entry["alpha_2"]!
            let found = try countries(["code": code.lowercased()])
            guard found.count == 1, let country = found.first else {
                mismatches.append("\(code): \(found.count) results")
                continue
            }
            if country["name"] as? String != entry["name"] || country["alpha3"] as? String != entry["alpha_3"]
                || country["numeric"] as? String != entry["numeric"]
            {
                mismatches.append("\(code): \(country)")
            }
            let expected = regions[code].map { "+\($0)" }
            if country["phoneCode"] as? String != expected { mismatches.append("\(code): phone \(country)") }
            let flag = String(
                String.UnicodeScalarView(code.unicodeScalars.map { Unicode.Scalar(0x1F1A5 + $0.value)! }))
            if country["flag"] as? String != flag { mismatches.append("\(code): flag \(country)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")

        // A calling code gives every country that shares it.
        let isoCodes = Set(iso.map { $0["alpha_2"]! })
        for phone in ["+1", "1", "+7", "+44", "+599"] {
            let number = Int(phone.drop { $0 == "+" })!
            let expected = Set(regions.filter { $0.value == number && isoCodes.contains($0.key) }.keys)
            let found = try countries(["phoneCode": phone]).compactMap { $0["code"] as? String }
            #expect(Set(found) == expected && found.count == expected.count, "\(phone): \(found) vs \(expected)")
        }
        #expect(try countries(["phoneCode": "+1"]).count == 25)
        #expect(Set(try countries(["phoneCode": "+7"]).compactMap { $0["code"] as? String }) == ["RU", "KZ"])

        for code in ["gb", "GBR", "gBr"] {
            let found = try countries(["code": code])
            #expect(found.count == 1 && found.first?["code"] as? String == "GB", "\(code): \(found)")
            #expect(found.first?["name"] as? String == "United Kingdom")
        }
        #expect(try countries(["code": "QQ"]).isEmpty)
        let german = try countries(["query": "Deutschland", "locale": "de"])
        #expect(german.first?["code"] as? String == "DE", "\(german)")
        #expect(german.first?["localizedName"] as? String == "Deutschland")
        #expect(try countries(["query": "Deutschland"]).isEmpty)
        #expect(try countries(["query": "neth"]).first?["code"] as? String == "NL")
        #expect(try countries(["query": "gb"]).first?["code"] as? String == "GB")
        #expect(try countries([:]).count == iso.count + 1, "every ISO country, and XK")

        let socket = ["--socket", daemon.socketPath]
        let nanp = try Self.akloc(socket + ["country", "+1"])
        #expect(nanp.code == 0 && nanp.out.split(separator: "\n").count == 25, "\(nanp)")
        let gb = try Self.akloc(socket + ["country", "gb"])
        #expect(gb.out == "🇬🇧 United Kingdom [GB GBR 826], calling code +44\n", "\(gb)")
        let de = try Self.akloc(socket + ["country", "deutschland", "--locale", "de"])
        #expect(de.out.hasPrefix("🇩🇪 Deutschland (Germany) [DE DEU 276]"), "\(de)")
        let none = try Self.akloc(socket + ["country", "atlantis"])
        #expect(none.code == 1 && none.err.contains("no country matches"), "\(none)")
        let search = try Self.akloc(socket + ["search", "enkhuizen", "--near", "52.72,5.33", "--limit", "1"])
        #expect(search.code == 0 && search.out.hasPrefix("Enkhuizen, North Holland, Netherlands"), "\(search)")
    }

    /// Each bad request gets `badRequest` naming the member; the client and
    /// another one are served after each.
    @Test func badInputIsRefusedAndEveryoneIsStillServed() throws {
        let daemon = try DaemonProcess(gpsdPort: 1, config: Self.dataConfig)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let (other, _) = try daemon.connect()
        let big = String(repeating: "x", count: 10_240)
        let cases: [(String, String)] = [
            (#"{"id":"bad","op":"reverseGeocode","coordinate":{"latitude":52,"longitude":5,"x":1}}"#, "\"x\""),
            (#"{"id":"bad","op":"reverseGeocode","where":{"latitude":52,"longitude":5}}"#, "\"where\""),
            (
                #"{"id":"bad","op":"reverseGeocode","coordinate":{"latitude":90.1,"longitude":5}}"#,
                "coordinate.latitude"
            ),
            (
                #"{"id":"bad","op":"reverseGeocode","coordinate":{"latitude":52,"longitude":-181}}"#,
                "coordinate.longitude"
            ),
            (
                #"{"id":"bad","op":"reverseGeocode","coordinate":{"latitude":"52","longitude":5}}"#,
                "coordinate.latitude"
            ),
            (
                #"{"id":"bad","op":"reverseGeocode","coordinate":{"latitude":null,"longitude":5}}"#,
                "coordinate.latitude"
            ),
            (#"{"id":"bad","op":"searchPlaces","query":""}"#, "\"query\""),
            (#"{"id":"bad","op":"searchPlaces","query":"\#(big)"}"#, "\"query\""),
            (#"{"id":"bad","op":"searchPlaces","query":"a","limit":0}"#, "\"limit\""),
            (#"{"id":"bad","op":"searchPlaces","query":"a","limit":1000000000}"#, "\"limit\""),
            (#"{"id":"bad","op":"searchPlaces","query":"a","within":"far"}"#, "\"within\""),
            (#"{"id":"bad","op":"searchPlaces","query":"a","near":{"latitude":100,"longitude":0}}"#, "near.latitude"),
            (#"{"id":"bad","op":"countries","code":"N"}"#, "\"code\""),
            (#"{"id":"bad","op":"countries","code":"NLDX"}"#, "\"code\""),
            (#"{"id":"bad","op":"countries","code":"528"}"#, "\"code\""),
            (#"{"id":"bad","op":"countries","phoneCode":"+3l"}"#, "\"phoneCode\""),
            (#"{"id":"bad","op":"countries","query":"neth","locale":"xx_YY"}"#, "\"locale\""),
            (#"{"id":"bad","op":"countries","query":"neth","locale":"../../etc"}"#, "\"locale\""),
            (#"{"id":"bad","op":"countries","query":"\#(big)"}"#, "\"query\""),
        ]
        for (line, field) in cases {
            try client.send(line: line)
            let reply = try client.waitFor { $0["id"] as? String == "bad" }
            #expect(reply.errorCode == "badRequest", "\(line.prefix(120)): \(reply)")
            let message = (reply["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(field), "\(line.prefix(120)): \(message)")
            #expect(try other.request("status").ok == true)
            let nl = try client.request("countries", ["code": "NL"])
            #expect(((nl.result as? [String: Any])?["countries"] as? [[String: Any]])?.count == 1)
        }
    }

    /// Without data aklocd still serves; the geo ops and key paths say why not.
    @Test func withoutDataTheLookupsAreUnavailable() throws {
        let daemon = try DaemonProcess(gpsdPort: 1, config: "[geo]\ndata-dir = /nonexistent/akloc\n")
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let reverse = try client.request("reverseGeocode", ["coordinate": ["latitude": 52, "longitude": 5]])
        #expect(reverse.errorCode == "unavailable", "\(reverse)")
        let message = (reverse["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("/nonexistent/akloc/places.bin"), "\(message)")
        #expect(try client.request("countries", ["code": "NL"]).errorCode == "unavailable")
        #expect(try client.request("observe", ["keyPath": "country"]).errorCode == "unavailable")
        #expect(try client.request("get", ["keyPath": "myPlacemark"]).errorCode == "unavailable")
        #expect(try client.request("observe", ["keyPath": "state"]).ok == true)
        #expect(try client.request("status").ok == true)
    }
}
