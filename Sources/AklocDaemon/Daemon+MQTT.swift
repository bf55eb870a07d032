import AklocCore
import AklocGPSD
import AklocMQTT
import AklocPosix
import AklocProtocol
import AklocSystemd

extension Daemon {
    /// When `[mqtt]` is enabled: starts the forwarder and makes it one more
    /// engine subscriber, with the forwarder's own throttle policy. It is
    /// root-equivalent (`authorizedAlways`): the administrator configured it.
    func startForwarder() throws(ComponentError) {
        let settings = configuration.mqtt
        guard settings.enabled else { return }
        let logger = logger
        let identity = settings.identityOnThisHost()
        let clock = clock
        let forwarder =
            environment.makeForwarder?(settings, identity, queue)
            ?? MQTTForwarder(
                settings: settings, identity: identity,
                stateDirectory: stateStore?.directory ?? StateStore.defaultDirectory, queue: queue,
                version: AklocVersion.string,
                log: { level, message in logger.log(level, message, ["AKLOC_MQTT": identity.topic]) },
                wallClock: { clock.wallNow() })
        self.forwarder = forwarder
        try components.append(forwarder)

        let id = server.reserveID()
        forwarderID = id
        let token = nextToken
        nextToken += 1
        // The engine's reply to this start has no pending request, so
        // `perform` drops it.
        run(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)))
        run(.request(id, token, .startUpdatingLocation(policy: .init(settings.policy), everyEpoch: false)))
        log(.notice, "forwarding fixes to \(forwarder.status.broker) on \(identity.topic) (tid \(identity.tid))")
    }

    /// An engine event for the forwarder's subscriber: each throttled
    /// delivery is one OwnTracks location. `perform` calls this after the
    /// step's socket writes, since `accept` appends to the journal and fsyncs.
    func forward(_ event: Engine.Event) {
        guard case .didUpdateLocation(let location, _) = event else { return }
        willForward?(location)
        forwarder?.accept(location)
    }

    /// The forwarder as `status` reports it.
    var forwarderStatus: DaemonStatus.MQTT? {
        guard let status = forwarder?.status else { return nil }
        return DaemonStatus.MQTT(
            broker: status.broker, topic: status.topic, tid: status.tid, connected: status.connected,
            queued: status.queued, queuedBytes: status.queuedBytes,
            oldestQueuedAgeSeconds: status.oldestQueuedAgeSeconds, published: status.published, failed: status.failed,
            resent: status.resent,
            dropped: DaemonStatus.MQTT.Dropped(
                maxEntries: status.dropped.maxEntries, maxBytes: status.dropped.maxBytes,
                maxAge: status.dropped.maxAge),
            lastError: status.connected ? nil : status.lastError?.description)
    }
}
