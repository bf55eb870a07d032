/// The akloc release, shown by `--version` and in the `hello` event.
public enum AklocVersion {
    public static let string = "0.1.0"
}
