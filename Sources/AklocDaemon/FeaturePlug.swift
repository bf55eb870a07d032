import AklocCore
import AklocFeature
import AklocPosix
import AklocProtocol

/// One line of the daemon's feature list: which feature, and which section
/// of the configuration it is made from. Type-erased here, so the daemon
/// keeps one list of features it never names.
struct FeaturePlug: Sendable {
    /// The section's name, for "applies at the next restart".
    let section: String
    let make: @Sendable (Configuration, any FeatureHost) -> PluggedFeature?
    let changed: @Sendable (Configuration, Configuration) -> Bool

    init<F: Feature>(_ type: F.Type, section: String, _ settings: @escaping @Sendable (Configuration) -> F.Settings) {
        self.init(section: section, settings) { F.make($0, host: $1) }
    }

    /// With a maker of its own (a test's feature with a scripted broker).
    init<F: Feature>(
        section: String, _ settings: @escaping @Sendable (Configuration) -> F.Settings,
        make: @escaping @Sendable (F.Settings, any FeatureHost) -> F?
    ) {
        self.section = section
        changed = { settings($0) != settings($1) }
        self.make = { configuration, host in
            make(settings(configuration), host).map { PluggedFeature(section, $0, settings) }
        }
    }
}

/// A made feature behind the few calls the daemon makes of it.
struct PluggedFeature {
    let section: String
    let component: any Component
    let apply: (Configuration) -> Void
    let report: (inout DaemonStatus) -> Void
    let answer: (ClientRequest.Operation, RequestID?, FeatureClient) -> Result<[UInt8], ProtocolError>?
    let clientGone: (SubscriberID) -> Void
    let refusal: (Engine.Request) -> ProtocolError?

    init<F: Feature>(_ section: String, _ feature: F, _ settings: @escaping (Configuration) -> F.Settings) {
        self.section = section
        component = feature
        apply = { feature.apply(settings($0)) }
        report = { feature.report(into: &$0) }
        answer = { feature.answer($0, id: $1, from: $2) }
        clientGone = { feature.clientGone($0) }
        refusal = { feature.refusal(of: $0) }
    }
}
