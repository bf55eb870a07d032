/// DESIGN §9's `TimeZone`: the IANA zone and its local time now. Named
/// TimeZoneInfo in Swift so that code importing Foundation too (the CLI,
/// tests) does not collide with Foundation.TimeZone; on the wire it is
/// `timeZone` with these members.
public struct TimeZoneInfo: Hashable, Sendable {
    /// IANA identifier, e.g. "Europe/Amsterdam".
    public var identifier: String
    /// e.g. "CEST"; tzdata's numeric ones such as "+0330" where a zone has no letters.
    public var abbreviation: String
    public var secondsFromGMT: Int
    public var isDaylightSavingTime: Bool

    public init(identifier: String, abbreviation: String, secondsFromGMT: Int, isDaylightSavingTime: Bool) {
        self.identifier = identifier
        self.abbreviation = abbreviation
        self.secondsFromGMT = secondsFromGMT
        self.isDaylightSavingTime = isDaylightSavingTime
    }

    /// The zone at `unixSeconds`, from its parsed tzdata file.
    public init(identifier: String, rules: TimeZoneRules, at unixSeconds: Int64) {
        let local = rules.localTime(at: unixSeconds)
        self.init(
            identifier: identifier, abbreviation: local.abbreviation, secondsFromGMT: local.secondsFromGMT,
            isDaylightSavingTime: local.isDaylightSavingTime)
    }

    /// The tzdata file of an identifier under the zoneinfo directory, or nil
    /// for one that could climb out of it ("..", an absolute path, odd bytes).
    public static func relativePath(of identifier: String) -> String? {
        let bytes = identifier.utf8
        guard !bytes.isEmpty, bytes.count <= 64, bytes.first != UInt8(ascii: "/"), !identifier.contains("..")
        else { return nil }
        let allowed = bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
        }
        return allowed ? identifier : nil
    }
}
