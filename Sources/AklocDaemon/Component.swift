import AklocCore

/// One part of the shell that owns its own state (the client server, the
/// gpsd source, the MQTT forwarder, the session monitor…). The daemon starts
/// its components in order and stops them in reverse (`ComponentGroup`), as
/// swift-service-lifecycle's ServiceGroup does; each talks to the engine
/// through the daemon's queue, never to another component.
///
/// Confinement: used only on the daemon's queue; `stop` is called at most
/// once per successful `start`.
protocol Component: AnyObject {
    /// For logs and errors: "client server", "gpsd source".
    var name: String { get }
    func start() throws(ComponentError)
    func stop()
}

/// A component that could not start: which one (first in the message), a
/// stable code, and why.
typealias ComponentError = CodedError<ComponentErrorCode>

/// The stable codes of `ComponentError`.
enum ComponentErrorCode: String, CodedErrorCode {
    /// The socket could not be served (bind, listen, a path too long).
    case cannotListen
    /// Any other start-up failure.
    case startFailed
}

extension CodedError where C == ComponentErrorCode {
    /// "client server: cannot bind … [cannotListen]".
    init(_ code: ComponentErrorCode, component: String, _ message: String) {
        self.init(code, "\(component): \(message)")
    }
}
