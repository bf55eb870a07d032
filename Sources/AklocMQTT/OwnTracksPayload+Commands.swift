import AklocCore

/// What the forwarder publishes in answer to OwnTracks commands
/// (docs/mqtt.md, "Commands").
extension OwnTracksPayload {
    /// The answer to `dump`: the effective `[mqtt]` settings as the apps
    /// dump theirs, a `_type:"configuration"` on `<topic>/dump`, in the
    /// apps' key names where one exists. Never the password, the password
    /// file, nor the client certificate's key or its path.
    public static func configuration(
        _ settings: MQTTSettings, identity: MQTTSettings.Identity, commands: [OwnTracksCommand.Action]
    ) -> [UInt8] {
        var object = Object()
        object.string("_type", "configuration")
        // OwnTracks' `auth`: whether a password is given (never the password).
        object.bool("auth", settings.password != nil || settings.passwordFile != nil)
        object.string("clientId", identity.clientID)
        object.bool("cmd", !commands.isEmpty)
        object.strings("cmdActions", commands.map(\.rawValue))
        object.string("deviceId", identity.device)
        // The apps have one broker: the first node; `hosts` lists them all.
        object.string("host", settings.hosts.first?.host ?? "")
        object.strings("hosts", settings.hosts.map(\.description))
        object.whole("keepalive", Int64(settings.keepalive))
        object.real("locatorDisplacement", settings.policy.distanceFilter)
        object.real("locatorInterval", settings.policy.maxInterval)
        object.real("minInterval", settings.policy.minInterval)
        // OwnTracks' connection modes: 0 is MQTT.
        object.whole("mode", 0)
        object.whole("port", Int64(settings.hosts.first?.port ?? settings.effectivePort))
        object.bool("pubRetain", settings.retain)
        object.whole("pubQos", Int64(settings.qos))
        object.string("pubTopicBase", identity.topic)
        object.string("tid", identity.tid)
        object.bool("tls", settings.tls)
        object.bool("tlsClientCertificate", settings.certFile != nil)
        object.string("username", settings.username ?? "")
        return object.bytes()
    }
}
