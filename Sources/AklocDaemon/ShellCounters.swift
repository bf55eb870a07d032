/// What the shell itself counts: connections, requests, writes, the source
/// link. Fixes, epochs and deliveries are the engine's (`Engine.Counters`):
/// `status` reports both, each from its one owner (StatusReport.swift).
struct ShellCounters: Hashable, Sendable {
    /// Location events replaced by a newer one in a slow client's queue.
    var eventsCoalesced: UInt64 = 0
    /// Clients disconnected for passing the queue's hard cap.
    var clientsDropped: UInt64 = 0
    /// Requests answered with badJSON, badRequest, unknownOp or unknownKeyPath.
    var badRequests: UInt64 = 0
    /// Connections closed for a line over 64 KiB.
    var linesTooLong: UInt64 = 0
    var connectionsAccepted: UInt64 = 0
    /// Requests received (valid or not).
    var requests: UInt64 = 0
    /// Times the gpsd connection was lost.
    var sourceDisconnects: UInt64 = 0
}
