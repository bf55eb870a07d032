import AKLocationManager
import AklocTestSupport
import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The manager's socket shell against a scripted daemon on a real Unix
/// socket: bytes aklocd never sends (garbage, a line cut off) and what the
/// manager writes. The docs' Swift example is checked against the example
/// program that `LiveManagerTests` runs.
@Suite(.serialized) struct FakeDaemonTests {
    static let hello = #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedAlways"}"#

    /// Serves connection `n` with `scripts[n]`: the bytes to send after the
    /// hello (answering nothing), then whether to close. Lines received are kept.
    final class ScriptedDaemon: @unchecked Sendable {
        // @unchecked: immutable but for `lines`, which guards itself.
        let path: String
        private let directory: String
        private let listener: Int32
        private let thread: Thread

        init(_ scripts: [(send: String, close: Bool)]) throws {
            let directory = TestSockets.temporaryDirectory()
            let path = directory + "/akloc.sock"
            let listener = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: path, listen: 8)
            let box = LinesBox()
            let hello = FakeDaemonTests.hello
            thread = Thread {
                for script in scripts {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }
                    let bytes = Array((hello + "\n" + script.send).utf8)
                    _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
                    if script.close {
                        close(connection)
                        continue
                    }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while true {
                        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                        guard count > 0 else { break }
                        box.append(String(decoding: buffer[..<count], as: UTF8.self))
                    }
                    close(connection)
                }
            }
            self.directory = directory
            self.path = path
            self.listener = listener
            lines = box
            thread.start()
        }

        private let lines: LinesBox

        /// Everything received so far.
        var text: String { lines.text }

        func stop() {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    final class LinesBox: @unchecked Sendable {
        // @unchecked: guarded by `lock`.
        private let lock = NSLock()
        private var value = ""
        func append(_ text: String) {
            lock.lock()
            value += text
            lock.unlock()
        }
        var text: String {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    @Test func garbageIsAClearErrorAndTheManagerReconnects() throws {
        let daemon = try ScriptedDaemon([("this is not json\n", false), ("", false)])
        defer { daemon.stop() }
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: daemon.path, callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.startUpdatingLocation()
        let error = try recorder.wait(timeout: 10) { if case .error = $0 { true } else { false } }
        guard case .error(.badMessage(let message)) = error else {
            Issue.record("not a badMessage: \(error)")
            return
        }
        #expect(message.contains("not the protocol"), "\(message)")
        _ = try recorder.wait(timeout: 10) { if case .state(.waitingToReconnect) = $0 { true } else { false } }
        _ = try recorder.wait(timeout: 10) { $0 == .state(.connected) }
        // Both connections asked for updates with the seed's policy.
        let requests = daemon.text.split(separator: "\n").filter { $0.contains("startUpdatingLocation") }
        #expect(requests.count >= 1)
        #expect(
            requests.first?.contains(#""policy":{"updateSpeed":0.4,"minInterval":5.0,"maxInterval":300.0"#) == true,
            "\(requests)")
    }

    /// The last reference to a manager may go on any thread while its
    /// socket is read on the manager's queue; the socket is still closed
    /// (on that queue). The daemon serves one connection at a time, so each
    /// manager after the first connects only once the one before it was
    /// closed. Under `swift test --sanitize=thread` it also checks the
    /// release for data races (it closed the socket on the releasing thread,
    /// issue 28's note).
    @Test func aManagerReleasedOnAnotherThreadClosesItsConnection() throws {
        let rounds = 20
        let daemon = try ScriptedDaemon(Array(repeating: (send: "", close: false), count: rounds))
        defer { daemon.stop() }
        for _ in 0..<rounds {
            let recorder = Recorder()
            let box = ManagerBox(AKLocationManager(socketPath: daemon.path, callbackQueue: recorder.queue))
            box.manager?.delegate = recorder
            box.manager?.startUpdatingLocation()
            _ = try recorder.wait(timeout: 10) { $0 == .state(.connected) }
            let released = DispatchSemaphore(value: 0)
            Thread {
                box.manager = nil
                released.signal()
            }.start()
            released.wait()
        }
        let requests = daemon.text.split(separator: "\n").filter { $0.contains("startUpdatingLocation") }
        #expect(requests.count >= rounds - 1)
    }

    final class ManagerBox: @unchecked Sendable {
        // @unchecked: handed from the test's thread to the releasing one, never shared.
        var manager: AKLocationManager?
        init(_ manager: AKLocationManager) { self.manager = manager }
    }

    @Test func aConnectionClosedMidLineSaysSo() throws {
        let daemon = try ScriptedDaemon([(#"{"event":"didUpdateLocation","loc"#, true)])
        defer { daemon.stop() }
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: daemon.path, callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.startUpdatingLocation()
        let error = try recorder.wait(timeout: 10) { if case .error = $0 { true } else { false } }
        #expect(error.errorCode == "badMessage")
        if case .error(let error) = error {
            #expect(error.description.contains("middle of a line (33 bytes without a newline)"), "\(error)")
        }
    }

    @Test func noDaemonIsOneConnectionError() async throws {
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: "/nonexistent/akloc.sock", callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.connect()
        let error = try recorder.wait(timeout: 10) { if case .error = $0 { true } else { false } }
        #expect(error.errorCode == "connection")
        if case .error(let error) = error {
            #expect(error.description.contains("cannot connect to aklocd at /nonexistent/akloc.sock"), "\(error)")
        }
        do {
            _ = try await manager.location(timeout: 0.5)
            Issue.record("a location without a daemon")
        } catch {
            #expect(error.code == "timeout")
        }
        #expect(recorder.entries.filter { $0.errorCode == "connection" }.count == 1, "\(recorder.entries)")
    }

    @Test func theDocsSwiftExamplesAreInTheExampleProgram() throws {
        let root = GPSFake.packageRoot
        let docs = try String(contentsOf: root.appendingPathComponent("docs/clients.md"), encoding: .utf8)
        let program = try String(
            contentsOf: root.appendingPathComponent("Examples/where-am-i-swift/main.swift"), encoding: .utf8)
        let blocks = docs.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
        #expect(blocks.count >= 2)
        for block in blocks {
            #expect(program.contains(block), "docs/clients.md has Swift the example program does not:\n\(block)")
        }
    }
}
