/// Where aklocd serves and its clients connect (DESIGN §3): `--socket`,
/// else `$AKLOC_SOCKET`, else `/run/akloc/akloc.sock`, where `akloc.socket`
/// listens. The daemon, the CLI and the client libraries all choose here.
public enum DefaultSocket {
    public static let path = "/run/akloc/akloc.sock"
    /// The variable that names another socket.
    public static let environmentVariable = "AKLOC_SOCKET"

    /// The socket to use, given an explicit `--socket` and the value of
    /// `$AKLOC_SOCKET` (an empty one counts as unset).
    public static func resolve(explicit: String?, environment: String?) -> String {
        if let explicit { return explicit }
        if let environment, !environment.isEmpty { return environment }
        return path
    }
}
