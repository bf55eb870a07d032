import AklocCore
import AklocPosix
import AklocProtocol
import AklocTrack

extension Daemon {
    /// When `[track]` is enabled: opens the day journals and makes the
    /// recorder one more engine subscriber (root-equivalent, like the MQTT
    /// forwarder), fed every epoch so it sees the real gaps between fixes,
    /// with its own policy deciding which become points. A journal that
    /// cannot be opened is logged and the daemon runs without a track.
    func startRecorder() {
        let settings = configuration.track
        guard settings.enabled else { return }
        let logger = logger
        let clock = clock
        let recorder = TrackRecorder(
            settings: settings, directory: (stateStore?.directory ?? StateStore.defaultDirectory) + "/track",
            log: { level, message in logger.log(level, message, [:]) }, wallClock: { clock.wallNow() })
        do {
            try components.append(recorder)
        } catch {
            log(.error, "not recording a track: \(error)")
            return
        }
        self.recorder = recorder
        if logger.minimumLevel == .debug {
            recorder.onRecord = { point in
                let location = point.location
                logger.log(
                    .debug,
                    "track recorded segment \(point.segment) at \(location.receivedAt?.iso8601 ?? "?") "
                        + "\(location.latitude) \(location.longitude)", [:])
            }
        }
        trackSyncTimer = clock.makeTimer { [weak self] in
            self?.assumeIsolated { daemon in
                daemon.recorder?.syncIfDue(at: daemon.clock.now())
                daemon.armTrackSync()
            }
        }
        let id = server.reserveID()
        recorderID = id
        let token = nextToken
        nextToken += 1
        run(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)))
        run(.request(id, token, .startUpdatingLocation(policy: settings.policy, everyEpoch: true)))
        log(.notice, "recording the track in \(recorder.store.directory)")
    }

    /// The recorder's share of one `perform` step, after its socket writes.
    func track(_ events: [Engine.Event]) {
        guard let recorder else { return }
        let now = clock.now()
        for event in events { recorder.handle(event, at: now) }
        armTrackSync()
    }

    func armTrackSync() {
        trackSyncTimer?.schedule(at: recorder?.syncDue, leeway: 0.05)
    }

    /// `track`: the recorded history is more sensitive than the current fix
    /// (it says where someone lives and works), so only `always` clients
    /// and admins may read it (docs/security.md).
    func answerTrack(_ query: TrackQuery, id: RequestID?, from client: ClientConnection) -> [UInt8] {
        guard client.isAdmin || engine.authorizationStatus(of: client.id) == .authorizedAlways else {
            return ServerEncoder.reply(
                id: id,
                error: ProtocolError(
                    .notAuthorized,
                    "the track needs an \"always\" authorization or the admin group: history says more than the current fix"
                ))
        }
        guard let recorder else {
            return ServerEncoder.reply(
                id: id,
                error: ProtocolError(.unavailable, "no track is recorded ([track] enable = no, or its journal failed)"))
        }
        // Half the hard limit: the page must fit in the client's queue even
        // if the socket takes none of it at once; and at most what a client's
        // line framer takes (the CLI's is 1 MiB).
        let budget = min(TrackQuery.maxReplyBytes, max(32 << 10, configuration.socket.clientHardLimit / 2))
        switch recorder.reply(to: query, id: id, byteBudget: budget) {
        case .success(let bytes): return bytes
        case .failure(let error): return ServerEncoder.reply(id: id, error: error)
        }
    }

    /// `clearTrack` (admin; checked by the caller).
    func clearTrack(before: FixTime?, id: RequestID?) -> [UInt8] {
        guard let recorder else {
            return ServerEncoder.reply(id: id, error: ProtocolError(.unavailable, "no track is recorded"))
        }
        do {
            try recorder.clear(before: before)
            return ServerEncoder.replyDone(id: id)
        } catch {
            return ServerEncoder.reply(id: id, error: ProtocolError(.storageFailed, error.message))
        }
    }
}

extension TrackRecorder: Component {
    public var name: String { "track recorder" }

    public func start() throws(ComponentError) {
        do {
            try open()
        } catch {
            throw ComponentError(.startFailed, component: name, error.message)
        }
    }

    public func stop() { close() }
}
