/// Where aklocd serves and akloc connects when neither `--socket` nor
/// `AKLOC_SOCKET` names another path (DESIGN §3); `akloc.socket` listens there.
public enum DefaultSocket {
    public static let path = "/run/akloc/akloc.sock"
}
