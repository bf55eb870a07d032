import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// aklocd out of file descriptors: `accept` fails with EMFILE while the
/// connection waits in the backlog, so the listening socket stays readable.
/// The daemon must back off instead of spinning, and accept again once
/// descriptors are free (found by the bench harness: before, 11.9 million
/// "accept failed" warnings in two minutes).
@Suite(.serialized)
struct AcceptLimitTests {
    @Test func fullDescriptorTableBacksOffAndRecovers() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-emfile-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("akloc.sock").path
        let configPath = directory.appendingPathComponent("akloc.conf").path
        try "".write(toFile: configPath, atomically: true, encoding: .utf8)
        // prlimit execs aklocd in place with a hard limit it cannot raise.
        let daemon = try TestProcess(
            "prlimit",
            [
                "--nofile=48:48", Binaries.aklocd, "--socket", socketPath, "--gpsd",
                "127.0.0.1:\(FreePort.loopbackTCP())", "--state-dir", directory.appendingPathComponent("state").path,
                "--config", configPath, "--log-level", "warning",
            ])
        defer { daemon.kill() }

        var clients: [SocketClient] = []
        let deadline = Date().addingTimeInterval(10)
        while clients.isEmpty, Date() < deadline {
            if let client = try? SocketClient(path: socketPath) { clients.append(client) } else { usleep(10_000) }
        }
        #expect(!clients.isEmpty, "aklocd never served: \(daemon.stderr())")
        // Far more clients than descriptors: the rest wait in the backlog.
        for _ in 0..<80 { clients.append(try SocketClient(path: socketPath)) }
        sleep(2)
        let failures = daemon.stderr().components(separatedBy: "accept failed").count - 1
        #expect(failures >= 1, "no accept failure logged: \(daemon.stderr())")
        #expect(failures <= 10, "aklocd retried accept \(failures) times in 2 s")
        #expect(daemon.isRunning)

        // Free the descriptors: a newcomer is served within the back-off.
        clients.removeAll()
        let newcomer = try SocketClient.connect(path: socketPath)
        let hello = try newcomer.readMessage(timeout: 5)
        #expect(hello["event"] as? String == "hello")
    }
}
