import AklocCore
import AklocPosix
import Testing

@testable import AklocHTTP

/// One connection's rules on a hand-set clock, no sockets: the head
/// deadline, routing, stalls and closing.
struct HTTPConnectionTests {
    static let start = Instant.seconds(1000)
    static let limits = HTTPServer.Limits()

    static func at(_ seconds: Double) -> Instant { start.advanced(bySeconds: seconds) }

    @Test func aHeadArrivingInPiecesIsRoutedWhenComplete() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        let head = Array("GET /x?a=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        for (index, byte) in head.dropLast().enumerated() {
            #expect(connection.received([byte], at: Self.at(Double(index) / 100)) == .wait)
        }
        #expect(
            connection.received(head.suffix(1), at: Self.at(5))
                == .route(HTTPRequestHead(method: "GET", path: "/x", query: "a=1", host: "127.0.0.1")))
        #expect(connection.awaitsAnswer)
        // Bytes after the head are not read as another request.
        #expect(connection.received(ArraySlice(head), at: Self.at(6)) == .wait)
    }

    @Test func aHeadNotCompleteByItsDeadlineGets408ThenACloseASecondLater() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        #expect(connection.received(ArraySlice("GET / HTTP/1.1\r\n".utf8), at: Self.at(1)) == .wait)
        #expect(connection.tick(at: Self.at(9.9), keepAlive: false) == .wait)
        guard case .respond(let response) = connection.tick(at: Self.at(10), keepAlive: false) else {
            Issue.record("no 408 at the deadline")
            return
        }
        #expect(response.status == 408)
        #expect(String(decoding: response.body, as: UTF8.self).contains("10 s"))
        // More bytes now change nothing.
        #expect(connection.received(ArraySlice("\r\n".utf8), at: Self.at(10.5)) == .wait)
        #expect(connection.tick(at: Self.at(10.9), keepAlive: false) == .wait)
        #expect(connection.tick(at: Self.at(11), keepAlive: false) == .close)
    }

    @Test func aRefusedHeadIsAnsweredWithItsStatus() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        guard
            case .respond(let response) = connection.received(
                ArraySlice("POST / HTTP/1.1\r\n\r\n".utf8), at: Self.at(0))
        else {
            Issue.record("POST not refused")
            return
        }
        #expect(response.status == 405)
        #expect(response.extraHeaders == [HTTPResponse.Header("Allow", "GET")])
        // Closed once written, or at the write deadline if it never drains.
        #expect(connection.wrote(.queued, at: Self.at(0)) == .wait)
        #expect(connection.tick(at: Self.at(29), keepAlive: true) == .wait)
        #expect(connection.tick(at: Self.at(30), keepAlive: true) == .close)
        #expect(connection.drained() == .close)
    }

    @Test func aDeferredAnswerThatNeverComesClosesAtTheWriteDeadline() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        _ = connection.received(ArraySlice("GET /later HTTP/1.1\r\n\r\n".utf8), at: Self.at(1))
        #expect(connection.awaitsAnswer)
        #expect(connection.tick(at: Self.at(30), keepAlive: false) == .wait)
        #expect(connection.tick(at: Self.at(31), keepAlive: false) == .close)
    }

    @Test func aStreamStalledForTheWriteTimeoutIsClosed() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        _ = connection.received(ArraySlice("GET /events HTTP/1.1\r\n\r\n".utf8), at: Self.at(0))
        connection.streaming()
        #expect(connection.isStreaming)
        #expect(connection.wrote(.written, at: Self.at(1)) == .wait)
        #expect(connection.tick(at: Self.at(2), keepAlive: true) == .send(ServerSentEvent.keepAlive))
        // Bytes wait from t=3; a partial drain does not reset the stall, a full one does.
        #expect(connection.wrote(.queued, at: Self.at(3)) == .wait)
        #expect(connection.wrote(.queued, at: Self.at(20)) == .wait)
        #expect(connection.tick(at: Self.at(32.9), keepAlive: false) == .wait)
        #expect(connection.drained() == .wait)
        #expect(connection.tick(at: Self.at(40), keepAlive: false) == .wait)
        #expect(connection.wrote(.coalesced, at: Self.at(41)) == .wait)
        #expect(connection.tick(at: Self.at(71), keepAlive: false) == .close)
    }

    @Test func aStreamPastItsByteCapOrFailedIsClosedAtOnce() {
        var connection = HTTPConnection(acceptedAt: Self.start, limits: Self.limits)
        connection.streaming()
        #expect(connection.wrote(.overCap(queuedBytes: 2 << 20), at: Self.at(0)) == .close)
        #expect(connection.wrote(.closed, at: Self.at(0)) == .close)
    }

    @Test func overTheConnectionLimitA503AndASecondToTakeIt() {
        let (connection, action) = HTTPConnection.overLimit(at: Self.start, limits: Self.limits)
        guard case .respond(let response) = action else {
            Issue.record("no 503")
            return
        }
        #expect(response.status == 503)
        var waiting = connection
        #expect(waiting.tick(at: Self.at(0.5), keepAlive: false) == .wait)
        #expect(waiting.tick(at: Self.at(1), keepAlive: false) == .close)
    }

    @Test func serverSentEventsCannotBeForgedThroughTheirData() {
        let bytes = ServerSentEvent.bytes(event: "loc\nation", data: Array("{\"a\":1}\nevent: x\r\ndata: y".utf8))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "event: location\ndata: {\"a\":1}\ndata: event: x\ndata: data: y\n\n")
    }
}
