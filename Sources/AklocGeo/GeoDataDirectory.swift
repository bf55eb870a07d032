/// Where the geo data (data/ of the repository) is looked for: aklocd's
/// `[geo] data-dir` rule, shared with `akloc map`, which draws the country
/// outlines from the same files.
public enum GeoDataDirectory {
    /// Where Debian's package (and `make install` with PREFIX=/usr) puts data/.
    public static let packaged = "/usr/share/akloc"

    /// The directories tried, in order: `explicit` alone when given; else
    /// `PREFIX/share/akloc` of an executable in PREFIX/bin or PREFIX/sbin (so
    /// a `make install` into /usr/local finds its own data), then `packaged`.
    public static func candidates(explicit: String?, executable: String?) -> [String] {
        if let explicit { return [explicit] }
        var candidates: [String] = []
        if let executable, let slash = executable.lastIndex(of: "/") {
            let bin = executable[..<slash]
            if let parent = bin.lastIndex(of: "/"), ["bin", "sbin"].contains(bin[bin.index(after: parent)...]) {
                candidates.append(String(bin[..<parent]) + "/share/akloc")
            }
        }
        if !candidates.contains(packaged) { candidates.append(packaged) }
        return candidates
    }
}
