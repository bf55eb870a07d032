import AklocCore
import AklocGPSD
import AklocTestSupport
import Foundation
import Testing

/// The source against a scripted fake gpsd: garbage, truncated JSON, invalid
/// UTF-8, an overlong line, a NUL byte, a line split across writes, EOF in
/// mid-line. Needs no gpsd installed.
@Suite struct FakeGPSDTests {
    static func latitude(_ second: Int) -> Double { 52 + Double(second) / 1000 }

    static func tpv(_ second: Int) -> [UInt8] {
        FakeGPSD.tpv(second: second, lat: latitude(second), lon: 5.25)
    }

    /// A backoff short enough that seven reconnects take well under a second.
    static let quickBackoff = Backoff(initial: 0.02, maximum: 0.2)

    @Test func survivesGarbageAndKeepsDeliveringValidFixes() throws {
        let split = Self.tpv(3)
        let scripts: [[FakeGPSD.Step]] = [
            [.send(Self.tpv(1)), .send(Array("hello garbage\r\n".utf8))],
            [
                .send(Self.tpv(2)),
                .send(Array(#"{"class":"TPV","device":"/dev/fake0","mode":3,"lat":51.1,"lon":5.1"#.utf8) + [13, 10]),
            ],
            [
                .send(
                    Array(#"{"class":"TPV","device":"/dev/fake"#.utf8) + [0xFF, 0xFE] + Array(#"","mode":3}"#.utf8) + [
                        13, 10,
                    ])
            ],
            [
                .send(
                    Array(#"{"class":"TPV","junk":""#.utf8) + Array(repeating: 0x61, count: 30_000)
                        + Array("\"}\r\n".utf8))
            ],
            [
                .send(Array(split[0..<40])), .pause(0.2), .send(Array(split[40...])),
                .send(
                    Array(#"{"class":"TPV","mode":3,"#.utf8) + [0] + Array(#""lat":51.1,"lon":5.1}"#.utf8) + [13, 10]),
            ],
            [.send(Self.tpv(4)), .send(Array(#"{"class":"TPV","device":"/dev/fake0","mode":3,"lat":51.1"#.utf8))],
            [.send(Self.tpv(10)), .pause(0.05), .send(Self.tpv(11)), .send(Self.tpv(11)), .send(Self.tpv(12))],
        ]
        let server = try FakeGPSD(scripts: scripts)
        defer { server.stop() }
        let harness = SourceHarness(endpoint: GPSDEndpoint(port: server.port), backoff: Self.quickBackoff)
        defer { harness.stop() }
        harness.start()

        let sawLast = harness.wait(for: 1, timeout: 30) { event in
            if case .fix(let location) = event { return location.latitude == Self.latitude(12) }
            return false
        }
        #expect(sawLast, "fixes after the garbage never arrived; logs: \(harness.logs)")
        let seconds = harness.fixes.map { Int(($0.latitude - 52) * 1000 + 0.5) }
        #expect(seconds == [1, 2, 3, 4, 10, 11, 11, 12], "every good TPV (the engine merges epochs), no bad line")
        #expect(!harness.fixes.contains { $0.latitude == 51.1 }, "a truncated TPV leaked through")
        #expect(harness.fixes.allSatisfy { $0.device == "/dev/fake0" && $0.altitude == 8.25 && $0.speed == 1.25 })
        let connections = harness.connectionEvents
        #expect(
            connections == Array(repeating: ["connected", "disconnected"], count: 6).flatMap { $0 } + ["connected"])
        let logs = harness.logs.joined(separator: "\n")
        for expected in ["protocolError", "truncated JSON", "invalid UTF-8", "lineTooLong", "NUL", "closedByPeer"] {
            #expect(logs.contains(expected), "no log line about \(expected)")
        }
        #expect(server.connectionCount == 7)
        #expect(harness.status?.connected == true)
        #expect(harness.status?.reconnectAttempts == 0)
    }

    @Test func connectsOnceAServerAppearsAndReportsOneOutage() throws {
        let port = FreePort.loopbackTCP()
        let harness = SourceHarness(endpoint: GPSDEndpoint(port: port), backoff: Self.quickBackoff)
        defer { harness.stop() }
        harness.start()
        #expect(harness.wait(for: 1, timeout: 10) { $0.isDisconnected })
        // Let it fail a few more times: still a single .disconnected.
        #expect(harness.waitForStatus(timeout: 10) { $0.reconnectAttempts >= 4 })
        #expect(harness.status?.lastError?.code == .connectFailed)

        let server = try FakeGPSD(scripts: [[.send(Self.tpv(1)), .send(Self.tpv(2))]], port: port)
        defer { server.stop() }
        #expect(harness.wait(for: 2, timeout: 10) { $0.isFix })
        #expect(harness.connectionEvents == ["disconnected", "connected"])
    }

    @Test func stopEmitsNothingAndClosesTheConnection() throws {
        let server = try FakeGPSD(scripts: [[.send(Self.tpv(1))]])
        defer { server.stop() }
        let harness = SourceHarness(endpoint: GPSDEndpoint(port: server.port), backoff: Self.quickBackoff)
        harness.start()
        #expect(harness.wait(for: 1, timeout: 10) { $0.isFix })
        harness.stop()
        #expect(harness.connectionEvents == ["connected"])
    }

    @Test func watchIsSentOnConnectAndDisabledOnRequest() throws {
        let server = try FakeGPSD(scripts: [[.send(Self.tpv(1))]])
        defer { server.stop() }
        let harness = SourceHarness(endpoint: GPSDEndpoint(port: server.port), backoff: Self.quickBackoff)
        defer { harness.stop() }
        harness.start()
        #expect(harness.wait(for: 1, timeout: 10) { $0.isFix })
        #expect(server.clientText.contains(#"?WATCH={"enable":true,"json":true"#))
        harness.setWatch(false)
        #expect(server.waitForClientText(#"?WATCH={"enable":false"#, timeout: 10))
        #expect(harness.status?.watching == false)
        #expect(harness.status?.connected == true)
    }

    @Test func aPeerThatNeverSendsVersionTimesOut() throws {
        // A listening socket that never accepts: the kernel completes the
        // TCP handshake, so the client connects, but no VERSION ever comes.
        let mute = try FakeGPSD.MuteListener()
        defer { mute.close() }
        let harness = SourceHarness(
            endpoint: GPSDEndpoint(port: mute.port), backoff: Self.quickBackoff, handshakeTimeout: 0.2)
        defer { harness.stop() }
        harness.start()
        #expect(harness.wait(for: 1, timeout: 10) { $0.isDisconnected })
        #expect(harness.waitForStatus(timeout: 10) { $0.reconnectAttempts >= 2 })
        #expect(harness.status?.lastError?.code == .handshakeTimeout)
        #expect(harness.connectionEvents == ["disconnected"])
    }

    /// libgps sends ?WATCH with write(2): on a socket gpsd has closed, that
    /// raises SIGPIPE, whose default action would kill the daemon.
    @Test func watchingAfterGpsdClosedDoesNotRaiseSIGPIPE() throws {
        let server = try FakeGPSD(scripts: [[.send(Self.tpv(1)), .waitForRelease], []])
        defer { server.stop() }
        let harness = SourceHarness(endpoint: GPSDEndpoint(port: server.port), backoff: Self.quickBackoff)
        defer { harness.stop() }
        harness.start()
        #expect(harness.wait(for: 1, timeout: 10) { $0.isFix })
        harness.onQueue { source in
            // The queue is held, so the source cannot see the EOF first.
            server.release()
            #expect(server.waitForClosedConnections(1, timeout: 10))
            for enabled in [false, true, false, true] { source.setWatch(enabled) }
        }
        #expect(harness.wait(for: 1, timeout: 10) { $0.isDisconnected })
        #expect(harness.wait(for: 2, timeout: 10) { $0.isConnected })
        #expect(harness.logs.contains { $0.contains("streamFailed") })
    }
}
