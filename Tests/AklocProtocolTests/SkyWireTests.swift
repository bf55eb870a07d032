import AklocCore
import AklocJSON
import AklocProtocol
import Testing

/// The `satellites` value on the wire: written by `ServerEncoder`, read by
/// `SkyView(wire:)`, which names the member at fault in what it refuses.
@Suite struct SkyWireTests {
    static let sky = SkyView(
        visible: 3, used: 2,
        dilutions: .init(hdop: 0.84, vdop: 1.03, pdop: 1.33, tdop: 0.61, gdop: 1.46, xdop: 0.51, ydop: 0.66),
        satellites: [
            .init(prn: 9, constellation: .gps, svid: 9, elevation: 88, azimuth: 89, signal: 31, used: true),
            .init(prn: 70, constellation: .glonass, svid: 6, elevation: -2.5, azimuth: 359.5, signal: 0, used: true),
            .init(prn: 200, used: false),
        ],
        device: "/dev/pts/1", timestamp: FixTime(secondsSince1970: 1_594_507_065),
        receivedAt: FixTime(secondsSince1970: 1_764_500_000, nanoseconds: 250_000_000))

    static func text(_ sky: SkyView) -> String {
        var writer = JSONWriter(capacity: 512)
        ServerEncoder.writeSky(sky, to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func read(_ text: String) throws -> SkyView {
        try SkyView(wire: JSONValue.parse(Array(text.utf8)).get())
    }

    @Test func roundTrips() throws {
        let text = Self.text(Self.sky)
        #expect(text.hasPrefix(#"{"visible":3,"used":2,"hdop":0.84,"#), "\(text)")
        #expect(text.contains(#"{"prn":200,"used":false}"#), "unknown members omitted: \(text)")
        #expect(try Self.read(text) == Self.sky)
        let empty = SkyView(visible: 0, used: 0)
        #expect(Self.text(empty) == #"{"visible":0,"used":0,"satellites":[]}"#)
        #expect(try Self.read(Self.text(empty)) == empty)
    }

    @Test func aChangeEventCarriesIt() throws {
        let line = ServerEncoder.event(.change(keyPath: KeyPath(.satellites), new: .sky(Self.sky), old: .null))
        guard case .change(let change) = try ServerEvent.decode(line.dropLast()).get() else {
            Issue.record("not a change: \(String(decoding: line, as: UTF8.self))")
            return
        }
        #expect(change.keyPath == KeyPath(.satellites))
        #expect(try SkyView(wire: change.new) == Self.sky)
    }

    @Test(arguments: [
        (#"[]"#, "\"satellites\" must be an object"),
        (#"{"used":1,"satellites":[]}"#, "missing \"satellites.visible\""),
        (#"{"visible":1,"satellites":[]}"#, "missing \"satellites.used\""),
        (#"{"visible":-1,"used":0,"satellites":[]}"#, "\"satellites.visible\""),
        (#"{"visible":1.5,"used":0,"satellites":[]}"#, "\"satellites.visible\""),
        (#"{"visible":"1","used":0,"satellites":[]}"#, "\"satellites.visible\""),
        (#"{"visible":1,"used":0}"#, "missing \"satellites.satellites\""),
        (#"{"visible":1,"used":0,"satellites":{}}"#, "\"satellites.satellites\" must be an array"),
        (#"{"visible":1,"used":0,"hdop":-1,"satellites":[]}"#, "\"satellites.hdop\""),
        (#"{"visible":1,"used":0,"device":5,"satellites":[]}"#, "\"satellites.device\""),
        (#"{"visible":1,"used":0,"timestamp":"yesterday","satellites":[]}"#, "\"satellites.timestamp\""),
        (#"{"visible":1,"used":0,"satellites":[5]}"#, "\"satellites.satellites[0]\" must be an object"),
        (#"{"visible":1,"used":0,"satellites":[{"used":true}]}"#, "missing \"satellites.satellites[0].prn\""),
        (#"{"visible":1,"used":0,"satellites":[{"prn":1}]}"#, "missing \"satellites.satellites[0].used\""),
        (#"{"visible":1,"used":0,"satellites":[{"prn":1,"used":1}]}"#, "\"satellites.satellites[0].used\""),
        (
            #"{"visible":1,"used":0,"satellites":[{"prn":1,"used":true},{"prn":2,"elevation":91,"used":true}]}"#,
            "\"satellites.satellites[1].elevation\""
        ),
        (#"{"visible":1,"used":0,"satellites":[{"prn":1,"azimuth":361,"used":true}]}"#, "azimuth"),
        (#"{"visible":1,"used":0,"satellites":[{"prn":1,"signal":-3,"used":true}]}"#, "signal"),
        (#"{"visible":1,"used":0,"satellites":[{"prn":1,"constellation":6,"used":true}]}"#, "constellation"),
    ])
    func badValuesAreRefusedByName(text: String, named: String) throws {
        let json = try JSONValue.parse(Array(text.utf8)).get()
        do throws(ProtocolError) {
            _ = try SkyView(wire: json)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.contains(named), "\(error.message)")
        }
    }

    @Test func oversizeAndTruncatedInputIsRefused() throws {
        let many = (0...SkyView.maximumSatellites).map { #"{"prn":\#($0),"used":false}"# }.joined(separator: ",")
        let json = try JSONValue.parse(Array(#"{"visible":1,"used":0,"satellites":[\#(many)]}"#.utf8)).get()
        #expect(throws: ProtocolError.self) { try SkyView(wire: json) }
        let text = Self.text(Self.sky)
        for cut in stride(from: 1, to: text.utf8.count, by: 7) {
            // A cut-off value is not JSON; the reader never sees it.
            #expect((try? Self.read(String(text.prefix(cut)))) == nil, "prefix \(cut)")
        }
        // An unknown constellation (a newer daemon) is unknown, not an error.
        let newer = #"{"visible":1,"used":0,"satellites":[{"prn":1,"constellation":"LEO","used":false}]}"#
        #expect(try Self.read(newer).satellites.first?.constellation == nil)
    }
}
