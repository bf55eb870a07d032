import AklocCore
import AklocFeature
import AklocJSON
import AklocPosix
import AklocProtocol

/// `[track]` as a feature (docs/track.md): the recorder is an engine
/// subscriber of its own (root-equivalent, as the administrator configured
/// it), fed every epoch so it sees the real gaps between fixes, with its own
/// policy deciding which become points; its sink writes a journal, so it
/// runs after the step's socket writes. It answers `track` and `clearTrack`
/// whether recording or not, so a client learns why there is no track.
/// A journal that cannot be opened is logged and the daemon runs without it.
public final class TrackFeature: Feature {
    public typealias Settings = TrackSettings

    public let name = "track recorder"
    public var failurePolicy: ComponentFailurePolicy { .logAndContinue }
    private let host: any FeatureHost
    /// Nil with `[track] enable = no`, or once its journal failed to open.
    public private(set) var recorder: TrackRecorder?
    private var syncTimer: (any ShellTimer)?
    /// The one import under way (one at a time: two would merge the same days).
    private var running: (client: SubscriberID, importer: TrackImport)?

    public static func make(_ settings: TrackSettings, host: any FeatureHost) -> TrackFeature? {
        TrackFeature(settings: settings, host: host)
    }

    init(settings: TrackSettings, host: any FeatureHost) {
        self.host = host
        // Nothing is recorded where the daemon keeps nothing on disk.
        guard settings.enabled, let directory = host.stateDirectory else { return }
        recorder = TrackRecorder(
            settings: settings, directory: directory + "/track",
            log: { [weak host] level, message in host?.log(level, message, [:]) },
            wallClock: { [clock = host.clock] in clock.wallNow() })
    }

    public func start() throws(ComponentError) {
        guard let recorder else { return }
        do {
            try recorder.open()
        } catch {
            self.recorder = nil
            throw ComponentError(.startFailed, component: name, "not recording a track: \(error.message)")
        }
        let history = TrackHistory(store: recorder.store)
        let logsDebug = host.logsDebug
        recorder.onRecord = { [weak host] point in
            if logsDebug {
                let location = point.location
                host?.log(
                    .debug,
                    "track recorded segment \(point.segment) at \(location.receivedAt?.iso8601 ?? "?") "
                        + "\(location.latitude) \(location.longitude)", [:])
            }
            history.recorded(point)
        }
        // For the features that read the track (the timeline).
        host.post(history)
        syncTimer = host.clock.makeTimer { [weak self] in
            guard let self, let recorder = self.recorder else { return }
            recorder.syncIfDue(at: self.host.clock.now())
            self.armSync()
        }
        let id = host.addSubscriber(.daemon, sink: Sink(.afterSockets) { [weak self] in self?.record($0) })
        host.startUpdating(id, policy: .init(recorder.settings.policy), everyEpoch: true)
        host.log(.notice, "recording the track in \(recorder.store.directory)")
    }

    public func stop() {
        running?.importer.discard()
        running = nil
        syncTimer?.cancel()
        recorder?.close()
    }

    public func apply(_ settings: TrackSettings) {
        host.log(.notice, "[track] applies at the next restart; the recorder keeps its running settings")
    }

    private func record(_ event: Engine.Event) {
        guard let recorder else { return }
        recorder.handle(event, at: host.clock.now())
        armSync()
    }

    private func armSync() {
        syncTimer?.schedule(at: recorder?.syncDue, leeway: 0.05)
    }

    public func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    {
        switch operation {
        case .track(let query): answerTrack(query, id: id, from: client)
        case .clearTrack(let before): clear(before: before, id: id)
        case .importTrack(let request): importTrack(request, id: id, from: client)
        default: nil
        }
    }

    public func clientGone(_ id: SubscriberID) {
        guard let running, running.client == id else { return }
        // Nothing of an import is in the journal before its commit ends.
        running.importer.discard()
        self.running = nil
        host.log(.notice, "track: discarded an import whose client left before committing it")
    }

    /// `importTrack` (admin; refused by the host otherwise): one step of
    /// this connection's import (TrackImport). A refused step discards the
    /// whole import, so nothing of it is ever half in the journal.
    private func importTrack(_ request: TrackImportRequest, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>
    {
        guard let recorder else {
            return .failure(
                ProtocolError(.unavailable, "no track is recorded ([track] enable = no, or its journal failed)", id: id)
            )
        }
        if let running, running.client != client.id {
            return .failure(
                ProtocolError(.unavailable, "another client's import is under way; try again after it", id: id))
        }
        if case .abort = request {
            running?.importer.discard()
            running = nil
            return .success(ServerEncoder.replyDone(id: id))
        }
        do {
            let importer: TrackImport
            if let current = running?.importer {
                importer = current
            } else {
                guard case .add = request else {
                    return .failure(ProtocolError(.badRequest, "no import to commit: \"add\" points first", id: id))
                }
                importer = try TrackImport(store: recorder.store) { [weak recorder] count in
                    recorder?.reserveSegments(count) ?? 0
                }
                running = (client.id, importer)
            }
            switch request {
            case .add(let points): try importer.add(points, now: host.clock.wallNow())
            case .commit: _ = try importer.commitStep()
            case .abort: break
            }
            let progress = importer.progress
            if progress.done {
                running = nil
                host.log(
                    .notice,
                    "track: imported \(progress.imported) point(s) into \(progress.days) day(s), "
                        + "skipped \(progress.skipped) already there")
            }
            return .success(ServerEncoder.reply(id: id, result: Self.json(progress, request: request)))
        } catch {
            let committed = running?.importer.committed ?? false
            running?.importer.discard()
            running = nil
            let code: ErrorCode = error.code == .badImport ? .badRequest : .storageFailed
            return .failure(ProtocolError(code, error.message + (committed ? "" : " (nothing was imported)"), id: id))
        }
    }

    private static func json(_ progress: TrackImport.Progress, request: TrackImportRequest) -> JSONValue {
        if case .add = request { return .object(["staged": .int(Int64(progress.staged))]) }
        return .object([
            "done": .bool(progress.done), "imported": .int(Int64(progress.imported)),
            "skipped": .int(Int64(progress.skipped)), "days": .int(Int64(progress.days)),
            "daysLeft": .int(Int64(progress.daysLeft)),
        ])
    }

    /// `track`: the recorded history is more sensitive than the current fix
    /// (it says where someone lives and works), so only `always` clients
    /// and admins may read it (docs/security.md).
    private func answerTrack(_ query: TrackQuery, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>
    {
        guard client.isAdmin || host.authorizationStatus(of: client.id) == .authorizedAlways else {
            return .failure(
                ProtocolError(
                    .notAuthorized,
                    "the track needs an \"always\" authorization or the admin group: history says more than the current fix"
                ))
        }
        guard let recorder else {
            return .failure(
                ProtocolError(.unavailable, "no track is recorded ([track] enable = no, or its journal failed)"))
        }
        // At most what a client's line framer takes (the CLI's is 1 MiB).
        return recorder.reply(
            to: query, id: id, byteBudget: min(TrackQuery.maxReplyBytes, max(32 << 10, client.replyBudget)))
    }

    /// `clearTrack` (admin; refused by the host otherwise).
    private func clear(before: FixTime?, id: RequestID?) -> Result<[UInt8], ProtocolError> {
        guard let recorder else { return .failure(ProtocolError(.unavailable, "no track is recorded")) }
        do {
            try recorder.clear(before: before)
            return .success(ServerEncoder.replyDone(id: id))
        } catch {
            return .failure(ProtocolError(.storageFailed, error.message))
        }
    }
}
