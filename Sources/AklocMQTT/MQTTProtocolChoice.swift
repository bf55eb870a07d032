/// Which MQTT version to speak to each node (`[mqtt] protocol`, docs/mqtt.md,
/// "MQTT 5"). Pure. With `auto`, a node is first asked for MQTT 5; one that
/// answers "unsupported protocol version" (NATS, older brokers) is spoken
/// to in 3.1.1 from then on, for the life of the process.
public struct MQTTProtocolChoice: Hashable, Sendable {
    public enum Setting: String, Hashable, Sendable, CaseIterable {
        case auto
        case v5 = "5"
        case v311 = "3.1.1"
    }

    public enum Version: String, Hashable, Sendable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    public let setting: Setting
    private var fellBack: Set<Int> = []

    public init(_ setting: Setting) {
        self.setting = setting
    }

    public func version(forNode node: Int) -> Version {
        switch setting {
        case .v5: .v5
        case .v311: .v311
        case .auto: fellBack.contains(node) ? .v311 : .v5
        }
    }

    /// `node` refused the version it was offered. True when the caller
    /// should try the same node again at once, in 3.1.1; false when the
    /// setting pins the version (the refusal is an ordinary failure then).
    public mutating func unsupported(node: Int) -> Bool {
        guard setting == .auto, !fellBack.contains(node) else { return false }
        fellBack.insert(node)
        return true
    }
}
