import AklocGeo

/// `[geo]`: the offline data behind places, countries and time zones
/// (docs/places.md).
public struct GeoSettings: Hashable, Sendable {
    /// Where Debian's package (and `make install` with PREFIX=/usr) puts data/.
    public static let packagedDataDirectory = GeoDataDirectory.packaged

    /// `data-dir`; nil: `$PREFIX/share/akloc` of the prefix aklocd runs
    /// from (so a `make install` into /usr/local finds its own data),
    /// then /usr/share/akloc.
    public var dataDirectory: String?

    public init() {}

    /// The directories tried, in order, for `data-dir` unset; an explicit
    /// setting is the only one (the rule is `GeoDataDirectory`'s, which
    /// `akloc map` uses too).
    public func dataDirectories(executable: String?) -> [String] {
        GeoDataDirectory.candidates(explicit: dataDirectory, executable: executable)
    }
}
