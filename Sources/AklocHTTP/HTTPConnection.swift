import AklocCore
import AklocPosix

/// One connection's life, as a value: what it waits for and until when.
/// `HTTPServer` tells it what happened, with the time, and carries out the
/// `Action` it returns; the tests drive it with a hand-set clock.
struct HTTPConnection: Equatable, Sendable {
    enum State: Equatable, Sendable {
        /// Until the blank line ending the head, or the deadline.
        case readingHead(deadline: Instant, received: [UInt8])
        /// A deferred route is working on the answer.
        case awaitingAnswer(deadline: Instant)
        /// Writing a response, closing when it is out.
        case responding(deadline: Instant)
        /// An event stream; `stalledSince` while bytes wait for the reader.
        case streaming(stalledSince: Instant?)
    }

    /// What the server does next.
    enum Action: Equatable, Sendable {
        case wait
        /// The head is complete: find its answer (then `routed`).
        case route(HTTPRequestHead)
        /// Write this and close once it is written.
        case respond(HTTPResponse)
        /// Write these bytes on the event stream.
        case send([UInt8])
        case close
    }

    private(set) var state: State
    let limits: HTTPServer.Limits

    /// A connection just accepted: its head must arrive within the head timeout.
    init(acceptedAt now: Instant, limits: HTTPServer.Limits) {
        self.limits = limits
        state = .readingHead(deadline: now.advanced(bySeconds: limits.headTimeout), received: [])
    }

    /// A connection over the limit: it gets 503 at once, and a second to take it.
    static func overLimit(at now: Instant, limits: HTTPServer.Limits) -> (HTTPConnection, Action) {
        var connection = HTTPConnection(acceptedAt: now, limits: limits)
        connection.state = .responding(deadline: now.advanced(bySeconds: 1))
        return (connection, .respond(.error(503, "too many connections")))
    }

    var isStreaming: Bool {
        if case .streaming = state { return true }
        return false
    }

    /// Bytes from the client. Only the head is read; what comes after it
    /// (a request body, a second request) is ignored.
    mutating func received(_ bytes: ArraySlice<UInt8>, at now: Instant) -> Action {
        guard case .readingHead(let deadline, var received) = state else { return .wait }
        received += bytes
        switch HTTPRequestHead.parse(received) {
        case .incomplete:
            state = .readingHead(deadline: deadline, received: received)
            return .wait
        case .refused(let status, let reason):
            state = .responding(deadline: now.advanced(bySeconds: limits.writeTimeout))
            return .respond(.error(status, reason))
        case .request(let head):
            // Until routed; a deferred answer must come within the write timeout.
            state = .awaitingAnswer(deadline: now.advanced(bySeconds: limits.writeTimeout))
            return .route(head)
        }
    }

    /// The route's answer is being written now.
    mutating func responding(at now: Instant) {
        state = .responding(deadline: now.advanced(bySeconds: limits.writeTimeout))
    }

    /// The route is an event stream.
    mutating func streaming() {
        state = .streaming(stalledSince: nil)
    }

    /// Whether a deferred answer is still wanted (the connection may have
    /// timed out meanwhile).
    var awaitsAnswer: Bool {
        if case .awaitingAnswer = state { return true }
        return false
    }

    /// What the server's write did.
    mutating func wrote(_ sent: BufferedStream.Sent, at now: Instant) -> Action {
        switch sent {
        case .written:
            return drained()
        case .queued, .coalesced:
            if case .streaming(nil) = state { state = .streaming(stalledSince: now) }
            return .wait
        case .overCap, .failed, .closed:
            // A stream this far behind is not being read; a failed one is gone.
            return .close
        }
    }

    /// Everything written has gone out.
    mutating func drained() -> Action {
        switch state {
        case .responding: return .close
        case .streaming:
            state = .streaming(stalledSince: nil)
            return .wait
        case .readingHead, .awaitingAnswer:
            return .wait
        }
    }

    /// Once a second: the deadlines, a stalled stream, and on `keepAlive`
    /// rounds a comment on each stream.
    mutating func tick(at now: Instant, keepAlive: Bool) -> Action {
        switch state {
        case .readingHead(let deadline, _):
            guard now >= deadline else { return .wait }
            state = .responding(deadline: now.advanced(bySeconds: 1))
            return .respond(.error(408, "the request head took longer than \(Int(limits.headTimeout)) s"))
        case .awaitingAnswer(let deadline), .responding(let deadline):
            return now >= deadline ? .close : .wait
        case .streaming(let stalledSince):
            if let stalledSince, now.seconds(since: stalledSince) >= limits.writeTimeout { return .close }
            return keepAlive ? .send(ServerSentEvent.keepAlive) : .wait
        }
    }
}
