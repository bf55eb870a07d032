import AklocTestSupport
import Glibc

@testable import AklocDaemon

/// The path the config parser tests parse as.
let configPath = "/etc/akloc/akloc.conf"

/// The error parsing `text` as `configPath` throws; nil when it parses.
func configFailure(_ text: String) -> ConfigError? {
    configFailure(Array(text.utf8))
}

func configFailure(_ bytes: [UInt8]) -> ConfigError? {
    do {
        _ = try ConfigParser.parse(bytes, path: configPath)
        return nil
    } catch {
        return error
    }
}
