import AklocCore

/// Where a feature's subscriber's events go, and when in a step.
public struct Sink {
    /// When a sink hears a step's events, relative to the socket writes of
    /// the same step. One rule for every feature (DESIGN §8): a sink that
    /// writes a journal (an fsync) runs after every client's socket write,
    /// so it never delays them.
    public enum Phase: Sendable, Hashable, Comparable {
        /// In order with the socket writes (in-memory hand-offs: D-Bus, NMEA readers).
        case withSockets
        /// After every socket write of the step (journals).
        case afterSockets
    }

    public var phase: Phase
    public var receive: (Engine.Event) -> Void

    public init(_ phase: Phase, _ receive: @escaping (Engine.Event) -> Void) {
        self.phase = phase
        self.receive = receive
    }
}
