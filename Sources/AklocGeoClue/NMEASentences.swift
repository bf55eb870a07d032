import AklocCore

/// One epoch as NMEA 0183: a GGA and an RMC sentence, each with its
/// checksum and CR LF, which is what GeoClue's NMEA source (2.6+,
/// `nmea-socket=`) reads.
///
/// Positions carry six decimals of minutes (1e-6 minute is under 2 mm),
/// so a parser gets the fix back within 1e-7 degrees. Unknown values are
/// empty fields. HDOP is not known to gpsd's TPV: it is written as the
/// horizontal accuracy over 5 m (a typical receiver's UERE), which is how
/// GeoClue turns HDOP back into an accuracy.
public enum NMEASentences {
    /// The GGA and RMC sentences for `location`; its time is the fix's own
    /// (`receivedAt` when the receiver gave none).
    public static func epoch(_ location: Location) -> String {
        gga(location) + rmc(location)
    }

    public static func gga(_ location: Location) -> String {
        let time = location.timestamp ?? location.receivedAt
        var fields = ["GPGGA", time.map(clock) ?? ""]
        fields += coordinates(location)
        fields.append("1")  // a GPS fix (gpsd does not tell DGPS apart here)
        fields.append("")  // satellites in use: not in a TPV
        fields.append(location.horizontalAccuracy.map { decimal(max($0 / 5, 0.1), places: 1) } ?? "")
        fields.append(location.altitude.map { decimal($0, places: 1) } ?? "")
        fields.append("M")
        if let altitude = location.altitude, let ellipsoidal = location.ellipsoidalAltitude {
            fields.append(decimal(ellipsoidal - altitude, places: 1))
        } else {
            fields.append("")
        }
        fields += ["M", "", ""]
        return sentence(fields)
    }

    public static func rmc(_ location: Location) -> String {
        let time = location.timestamp ?? location.receivedAt
        var fields = ["GPRMC", time.map(clock) ?? "", "A"]
        fields += coordinates(location)
        fields.append(location.speed.map { decimal($0 * 3600 / 1852, places: 3) } ?? "")
        fields.append(location.course.map { decimal($0, places: 2) } ?? "")
        fields.append(time.map(date) ?? "")
        fields += ["", "", "A"]
        return sentence(fields)
    }

    /// `$fields*HH\r\n`, HH the XOR of every byte between `$` and `*`.
    static func sentence(_ fields: [String]) -> String {
        let body = fields.joined(separator: ",")
        return "$" + body + "*" + hex(checksum(body)) + "\r\n"
    }

    public static func checksum(_ body: String) -> UInt8 {
        body.utf8.reduce(0, ^)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    private static func coordinates(_ location: Location) -> [String] {
        [
            angle(abs(location.latitude), degreeDigits: 2), location.latitude < 0 ? "S" : "N",
            angle(abs(location.longitude), degreeDigits: 3), location.longitude < 0 ? "W" : "E",
        ]
    }

    /// `dddmm.mmmmmm`: whole degrees, then minutes with six decimals.
    static func angle(_ value: Double, degreeDigits: Int) -> String {
        let microMinutes = (value * 60_000_000).rounded()
        let degrees = Int64(microMinutes / 60_000_000)
        let rest = Int64(microMinutes) - degrees * 60_000_000
        return pad(degrees, degreeDigits) + pad(rest / 1_000_000, 2) + "." + pad(rest % 1_000_000, 6)
    }

    /// `hhmmss.ss` UTC.
    private static func clock(_ time: FixTime) -> String {
        let secondOfDay = time.secondOfDay
        let hundredths = Int64(time.nanoseconds) / 10_000_000
        return pad(secondOfDay / 3600, 2) + pad(secondOfDay / 60 % 60, 2) + pad(secondOfDay % 60, 2) + "."
            + pad(hundredths, 2)
    }

    /// `ddmmyy` UTC.
    private static func date(_ time: FixTime) -> String {
        let (year, month, day) = FixTime.civil(fromDays: time.day)
        return pad(Int64(day), 2) + pad(Int64(month), 2) + pad(Int64(year % 100), 2)
    }

    /// `value` with exactly `places` decimals, no exponent.
    static func decimal(_ value: Double, places: Int) -> String {
        var scale: Double = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = scaled % Int64(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return places == 0 ? sign + String(whole) : sign + String(whole) + "." + pad(fraction, places)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
