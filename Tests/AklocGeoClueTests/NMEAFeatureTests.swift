import AklocCore
import AklocFeature
import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@testable import AklocGeoClue

/// `NMEAFeature` against a fake host, on a real Unix socket: a subscriber
/// exactly while anyone reads, and each epoch into its sink written to
/// every reader as GGA and RMC.
@Suite final class NMEAFeatureTests {
    let directory = makeTemporaryDirectory()
    let host = FakeHost()
    var path: String { directory + "/nmea.sock" }

    deinit { removeTree(directory) }

    func started() throws -> NMEAFeature {
        var settings = GeoClueSettings()
        settings.nmeaSocket = path
        settings.nmeaSocketMode = 0o600
        let feature = try #require(host.sync { NMEAFeature.make(settings, host: host) })
        try host.sync { try feature.start() }
        return feature
    }

    static func fix(_ second: Int64) -> Location {
        Location(
            latitude: 52.7033, longitude: 5.2917, altitude: 1.5, horizontalAccuracy: 4, speed: 2.5, course: 45,
            timestamp: FixTime(secondsSince1970: 1_780_000_000 + second))
    }

    /// The two lines a reader gets for one epoch, each up to its LF (its CR kept).
    static func lines(_ location: Location) -> [String] {
        Array(NMEASentences.epoch(location).utf8).split(separator: 10).map { String(decoding: $0, as: UTF8.self) }
    }

    func read(_ reader: SocketClient, count: Int) throws -> [String] {
        try (0..<count).map { _ in try #require(try reader.readLine(timeout: 10)) }
    }

    @Test func readersGetEachEpochAsGGAAndRMCWhileASubscriberExists() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        host.sync {
            #expect(host.added.isEmpty, "nobody reads: gpsd may idle the receiver")
            #expect(fileMode(path).map { $0 & 0o777 } == 0o600)
            #expect(host.lines.contains { $0.message == "serving NMEA on \(path)" && $0.fields["AKLOC_NMEA"] == path })
        }

        let first = try SocketClient(path: path)
        #expect(host.waitUntil { host.subscribers.count == 1 })
        let id = try #require(host.sync { host.added.first })
        host.sync {
            #expect(host.changes == [.added(id, .daemon, .withSockets)])
            let start = host.startRequest(of: id)
            #expect(start?.everyEpoch == true && start?.policy == nil)
        }

        host.sync { host.deliverEpoch(Self.fix(0)) }
        let sentences = try read(first, count: 2)
        #expect(sentences == Self.lines(Self.fix(0)))
        #expect(sentences[0].hasPrefix("$GPGGA,") && sentences[1].hasPrefix("$GPRMC,"))
        #expect(sentences.allSatisfy { $0.hasSuffix("\r") })

        // A second reader: the same subscriber serves both.
        let second = try SocketClient(path: path)
        #expect(host.waitUntil { feature.feed.readerCount == 2 })
        host.sync {
            #expect(host.added == [id])
            // Only locations are written: a notification in between writes nothing.
            host.deliver(.didGetNotification(.sourceDisconnected), to: id)
            host.deliverEpoch(Self.fix(1))
        }
        #expect(try read(first, count: 2) == Self.lines(Self.fix(1)))
        #expect(try read(second, count: 2) == Self.lines(Self.fix(1)))
    }

    @Test func theLastReaderLeavingRemovesTheSubscriber() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        var first: SocketClient? = try SocketClient(path: path)
        var second: SocketClient? = try SocketClient(path: path)
        #expect(host.waitUntil { feature.feed.readerCount == 2 })
        let id = try #require(host.sync { host.added.first })

        first = nil
        #expect(host.waitUntil { feature.feed.readerCount == 1 })
        host.sync { #expect(host.removed.isEmpty, "one still reads") }
        second = nil
        #expect(host.waitUntil { host.removed == [id] })
        host.sync {
            #expect(host.subscribers.isEmpty)
            #expect(host.inputs.contains { if case .disconnect(id) = $0 { true } else { false } })
        }

        // A reader coming back brings a new subscriber.
        let again = try SocketClient(path: path)
        #expect(host.waitUntil { host.subscribers.count == 1 })
        host.sync {
            #expect(host.added.count == 2 && host.added[1] != id)
            host.deliverEpoch(Self.fix(2))
        }
        #expect(try read(again, count: 2) == Self.lines(Self.fix(2)))
        _ = (first, second)
    }

    @Test func stopClosesTheReadersAndRemovesTheSocket() throws {
        let feature = try started()
        let reader = try SocketClient(path: path)
        #expect(host.waitUntil { host.subscribers.count == 1 })
        host.sync { feature.stop() }
        #expect(try reader.readLine(timeout: 10) == nil, "end of file")
        #expect(fileMode(path) == nil)
    }

    @Test func makeNeedsASocketPath() throws {
        host.sync {
            #expect(NMEAFeature.make(GeoClueSettings(), host: host) == nil)
            #expect(host.lines.isEmpty)
        }
    }

    @Test func aSocketThatCannotBeServedFailsTheStart() throws {
        var settings = GeoClueSettings()
        settings.nmeaSocket = directory + "/missing/nmea.sock"
        let feature = try #require(host.sync { NMEAFeature.make(settings, host: host) })
        #expect(feature.failurePolicy == .abortStart)
        let error = host.start(feature)
        #expect(error?.code == .cannotListen)
        host.sync { #expect(host.added.isEmpty) }
    }
}
