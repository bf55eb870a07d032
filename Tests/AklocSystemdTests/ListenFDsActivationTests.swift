import AklocCore
import AklocTestSupport
import Glibc
import Testing

@testable import AklocSystemd

/// Real socket activation: `systemd-socket-activate` runs this very test
/// binary again, filtered to `activatedChild`, which reports what `ListenFDs`
/// made of the descriptors it was handed. Part of the serialized environment
/// suite: the child inherits this process's environment.
private let socketActivateTool = "/usr/bin/systemd-socket-activate"

extension SystemdEnvironmentTests {
    /// Runs in the child only.
    @Test(.enabled(if: getenv("AKLOC_LISTENFDS_RESULT") != nil))
    func activatedChild() throws {
        let resultPath = String(cString: getenv("AKLOC_LISTENFDS_RESULT"))
        var outcome: String
        do {
            if let fd = try ListenFDs.unixStreamListener() {
                outcome = "listener \(fd)"
            } else {
                outcome = "none"
            }
        } catch {
            outcome = "error \(error.code.rawValue)"
        }
        outcome += getenv("LISTEN_FDS") == nil ? " unset" : " still-set"
        let file = try #require(fopen(resultPath, "w"))
        fputs(outcome, file)
        fclose(file)
    }

    private func activate(listeners: Int) throws -> String? {
        let directory = TestSockets.temporaryDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        var executable = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &executable, executable.count - 1)
        try #require(length > 0)
        var arguments = [socketActivateTool]
        for index in 0..<listeners { arguments += ["-l", "\(directory)/s\(index)"] }
        arguments += [
            "-E", "AKLOC_LISTENFDS_RESULT=\(directory)/result",
            String(decoding: executable.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self),
            "--testing-library", "swift-testing", "--filter", "activatedChild",
        ]
        let pid = spawnQuietly(arguments)
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        // systemd-socket-activate starts the program on the first connection.
        let client = try #require(connectWhenListening("\(directory)/s0"))
        defer { close(client) }
        for _ in 0..<1500 {
            if let result = readResult("\(directory)/result"), !result.isEmpty { return result }
            usleep(20_000)
        }
        return nil
    }

    private func readResult(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = fread(&buffer, 1, buffer.count, file)
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    @Test(.enabled(if: access(socketActivateTool, X_OK) == 0 && getenv("AKLOC_LISTENFDS_RESULT") == nil))
    func activatedUnixStreamSocketIsAccepted() throws {
        #expect(try activate(listeners: 1) == "listener 3 unset")
    }

    @Test(.enabled(if: access(socketActivateTool, X_OK) == 0 && getenv("AKLOC_LISTENFDS_RESULT") == nil))
    func twoActivatedSocketsAreRefused() throws {
        #expect(try activate(listeners: 2) == "error tooManyDescriptors unset")
    }
}
