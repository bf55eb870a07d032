extension Configuration {
    /// `[geo]`: the offline data behind places, countries and time zones
    /// (docs/places.md).
    public struct Geo: Hashable, Sendable {
        /// Where Debian's package (and `make install` with PREFIX=/usr) puts data/.
        public static let packagedDataDirectory = "/usr/share/akloc"

        /// `data-dir`; nil: `$PREFIX/share/akloc` of the prefix aklocd runs
        /// from (so a `make install` into /usr/local finds its own data),
        /// then /usr/share/akloc.
        public var dataDirectory: String?

        public init() {}

        /// The directories tried, in order, for `data-dir` unset; an explicit
        /// setting is the only one.
        public func dataDirectories(executable: String?) -> [String] {
            if let dataDirectory { return [dataDirectory] }
            var candidates: [String] = []
            // aklocd in PREFIX/bin or PREFIX/sbin: the data is in PREFIX/share/akloc.
            if let executable, let slash = executable.lastIndex(of: "/") {
                let bin = executable[..<slash]
                if let parent = bin.lastIndex(of: "/"), ["bin", "sbin"].contains(bin[bin.index(after: parent)...]) {
                    candidates.append(String(bin[..<parent]) + "/share/akloc")
                }
            }
            if !candidates.contains(Self.packagedDataDirectory) { candidates.append(Self.packagedDataDirectory) }
            return candidates
        }
    }
}
