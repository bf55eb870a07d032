import AklocTestSupport
import Glibc

/// A fresh directory under /tmp for one test, and small raw file helpers
/// that do not go through the code under test.
final class ScratchFiles {
    let path = TestSockets.temporaryDirectory()

    deinit { _ = system("rm -rf '\(path)'") }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o644) {
        let fd = open(file(name), O_WRONLY | O_CREAT | O_TRUNC, mode)
        precondition(fd >= 0, "open \(name) failed")
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, mode)
        close(fd)
    }
}
