/// `[geoclue]` (docs/desktop.md): the GeoClue2 front and the NMEA feed,
/// both off by default.
public struct GeoClueSettings: Hashable, Sendable {
    /// Own `org.freedesktop.GeoClue2` on the system bus.
    public var enabled = false
    /// Serve NMEA (GGA and RMC per epoch) on this Unix socket.
    public var nmeaSocket: String?
    /// The NMEA socket's permissions. Group read/write by default: GeoClue's
    /// own user joins aklocd's group to read it (the feed bypasses
    /// [authorization], so it is not world-readable unless chosen).
    public var nmeaSocketMode: UInt32 = 0o660

    public init() {}
}
