import AklocCore

/// One part of the shell that owns its own state (the client server, the
/// gpsd source, each feature…). The daemon starts its components in order
/// and stops them in reverse (`ComponentGroup`), as swift-service-lifecycle's
/// ServiceGroup does, and never names them; each reaches the engine only
/// through its host.
///
/// Confinement: used only on the daemon's queue; `stop` is called at most
/// once per successful `start`.
public protocol Component: AnyObject {
    /// For logs and errors: "client server", "gpsd source".
    var name: String { get }
    /// What a failed start means for the rest (declared by the component,
    /// not decided by whoever starts it).
    var failurePolicy: ComponentFailurePolicy { get }
    func start() throws(ComponentError)
    func stop()
}

extension Component {
    public var failurePolicy: ComponentFailurePolicy { .abortStart }
}

/// What a component that cannot start does to the daemon's start.
public enum ComponentFailurePolicy: Sendable, Hashable {
    /// Nothing can be served without it (the client socket, the gpsd
    /// source): what started is stopped and the error is passed on.
    case abortStart
    /// The daemon is useful without it (the track when its journal cannot
    /// be opened): the error is logged and the rest start.
    case logAndContinue
}

/// A component that could not start: which one (first in the message), a
/// stable code, and why.
public typealias ComponentError = CodedError<ComponentErrorCode>

/// The stable codes of `ComponentError`.
public enum ComponentErrorCode: String, CodedErrorCode {
    /// A socket could not be served (bind, listen, a path too long).
    case cannotListen
    /// Any other start-up failure.
    case startFailed
}

extension CodedError where C == ComponentErrorCode {
    /// "client server: cannot bind … [cannotListen]".
    public init(_ code: ComponentErrorCode, component: String, _ message: String) {
        self.init(code, "\(component): \(message)")
    }
}
