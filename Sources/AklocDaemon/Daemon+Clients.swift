import AklocCore
import AklocGPSD
import AklocProtocol
import Dispatch

extension Daemon {
    /// Accepts every waiting connection: credentials, authorization, `hello`.
    func acceptPending() {
        guard let listener else { return }
        while true {
            let accepted: (UnixSocket, UnixSocket.Credentials)?
            do {
                accepted = try listener.accept()
            } catch {
                suspendAccepting(error)
                return
            }
            guard let (socket, credentials) = accepted else { return }
            admit(socket, credentials)
        }
    }

    /// A failed accept (EMFILE, ENFILE, ENOBUFS…) leaves the connection
    /// waiting in the backlog, so the level-triggered listening source would
    /// fire again at once and spin the event loop, starving every client.
    /// Stop listening instead, until a client leaves (freeing a descriptor)
    /// or a second has passed; waiting peers stay queued in the backlog.
    private func suspendAccepting(_ error: SocketError) {
        guard !acceptSuspended, let listenWatch else { return }
        acceptSuspended = true
        listenWatch.suspend()
        log(.warning, "accept failed (\(error)): not accepting until a client leaves or for 1 s")
        queue.asyncAfter(deadline: .now() + 1) { [weak self] in
            self?.assumeIsolated { $0.resumeAccepting() }
        }
    }

    func resumeAccepting() {
        guard acceptSuspended, let listenWatch else { return }
        acceptSuspended = false
        listenWatch.resume()
    }

    private func admit(_ socket: UnixSocket, _ credentials: UnixSocket.Credentials) {
        let id = nextSubscriberID
        nextSubscriberID += 1
        counters.connectionsAccepted += 1

        let identity = users.identity(uid: credentials.uid, gid: credentials.gid)
        let status = authorizer.status(for: identity, decisions: engine.persistentState.authorizationDecisions)
        let client = ClientConnection(
            id: id, socket: socket, credentials: credentials, identity: identity,
            isAdmin: authorizer.isAdmin(identity), connectedAt: SystemClock.monotonicNow(), queue: queue
        ) { [weak self] in
            self?.assumeIsolated { $0.clientReadable(id) }
        }
        clients[id] = client
        clientsPerUID[credentials.uid, default: 0] += 1
        log(
            .debug, "client \(id) connected",
            ["AKLOC_CLIENT_UID": "\(credentials.uid)", "AKLOC_CLIENT_PID": "\(credentials.pid)"])
        if let departure = deliver(ServerEncoder.hello(authorizationStatus: status), to: client) {
            depart(id, departure)
            return
        }
        run(
            .connect(
                id,
                Engine.Peer(
                    uid: credentials.uid, authorization: status, sessionActive: sessions.isActive(uid: credentials.uid))
            ))
    }

    /// Reads what the client sent; each complete line is one request.
    func clientReadable(_ id: SubscriberID) {
        guard let client = clients[id] else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // A few reads per wake-up at most, so one chatty client cannot starve the rest.
        for _ in 0..<4 {
            let result: UnixSocket.ReadResult
            do {
                result = try buffer.withUnsafeMutableBytes { try client.socket.read(into: $0) }
            } catch {
                drop(id, reason: "read failed: \(error)")
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .endOfFile:
                disconnect(id, reason: client.framer.pendingByteCount == 0 ? nil : "closed mid-line")
                return
            case .bytes(let count):
                guard receive(buffer[0..<count], from: client) else { return }
            }
        }
    }

    /// Frames received bytes into request lines; false when the client was closed.
    private func receive(_ bytes: ArraySlice<UInt8>, from client: ClientConnection) -> Bool {
        client.framer.append(contentsOf: bytes)
        while let frame = client.framer.next() {
            switch frame {
            case .line(let line):
                counters.requests += 1
                handle(line: line, from: client)
                if client.isClosed { return false }
            case .lineTooLong:
                counters.badRequests += 1
                counters.linesTooLong += 1
                let error = ProtocolError(
                    .lineTooLong, "a request line must be at most \(client.framer.maxLineLength) bytes")
                _ = deliver(ServerEncoder.reply(error: error), to: client)
                _ = client.flush()
                disconnect(client.id, reason: "line over \(client.framer.maxLineLength) bytes")
                return false
            }
        }
        return true
    }

    /// The client went away (or must go): tell the engine, free everything.
    func disconnect(_ id: SubscriberID, reason: String?) {
        guard let client = clients.removeValue(forKey: id) else { return }
        client.close { [weak self] in
            // A descriptor is free again: accept can go on after EMFILE.
            self?.assumeIsolated { $0.resumeAccepting() }
        }
        pendingRequests = pendingRequests.filter { $0.value.client != id }
        if let reason {
            log(.info, "client \(id) disconnected: \(reason)", ["AKLOC_CLIENT_UID": "\(client.credentials.uid)"])
        }
        let uid = client.credentials.uid
        clientsPerUID[uid, default: 1] -= 1
        if clientsPerUID[uid] == 0 {
            // The uid's last client is gone: stop watching its login sessions.
            clientsPerUID[uid] = nil
            sessions.forget(uid: uid)
        }
        run(.disconnect(id))
    }

    func drop(_ id: SubscriberID, reason: String) {
        guard let client = clients[id] else { return }
        counters.clientsDropped += 1
        log(
            .warning, "dropping client \(id) (uid \(client.credentials.uid), pid \(client.credentials.pid)): \(reason)",
            ["AKLOC_CLIENT_UID": "\(client.credentials.uid)"])
        disconnect(id, reason: nil)
    }
}
