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

/// A component that could not start: which one, a stable code, and why.
struct ComponentError: Error, CustomStringConvertible {
    enum Code: String, Sendable {
        /// The socket could not be served (bind, listen, a path too long).
        case cannotListen
        /// Any other start-up failure.
        case startFailed
    }

    var code: Code
    var component: String
    var message: String

    init(_ code: Code, component: String, _ message: String) {
        self.code = code
        self.component = component
        self.message = message
    }

    var description: String { "\(component): \(message) [\(code.rawValue)]" }
}
