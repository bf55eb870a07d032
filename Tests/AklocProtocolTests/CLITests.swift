// End-to-end tests of the `akloc` binary against a fake daemon: a Unix
// socket in a temporary directory that says hello and answers from a script.
// Every wait is bounded (poll with a timeout); nothing sleeps to synchronise.

import AklocJSON
import AklocProtocol
import AklocTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The built `akloc`, next to this test bundle in the build directory.
private let aklocBinary: String? = {
    guard let test = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    let path = URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent("akloc").path
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}()

private let hello = #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedAlways"}"#

/// What the fake daemon does with one request: lines to send back, and
/// whether to close the connection after them.
struct Answer: Sendable {
    var lines: [String]
    var close = false
}

/// A lock-protected value shared with a thread.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
    func append<Element>(_ element: Element) where Value == [Element] { mutex.withLock { $0.append(element) } }
}

/// A one-connection fake aklocd.
final class FakeDaemon: Sendable {
    let directory: String
    let path: String
    private let listener: Int32
    private let requests = Locked<[JSONValue]>([])
    private let finished = DispatchSemaphore(value: 0)

    init(
        greeting: String = hello, _ script: @escaping @Sendable (_ request: JSONValue, _ index: Int) -> Answer
    ) throws {
        var template = Array("/tmp/akloc-cli-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: made)
        path = directory + "/akloc.sock"
        let listener = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: path, listen: 4)
        self.listener = listener
        let requests = requests
        let finished = finished
        Thread.detachNewThread {
            defer { finished.signal() }
            guard waitReadable(listener, seconds: 20) else { return }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            sendLine(client, greeting)
            var framer = LineFramer()
            var index = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            while waitReadable(client, seconds: 20) {
                let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                framer.append(contentsOf: buffer[0..<count])
                while case .line(let line)? = framer.next() {
                    let request = (try? JSONValue.parse(line).get()) ?? .null
                    requests.append(request)
                    let answer = script(request, index)
                    index += 1
                    for reply in answer.lines { sendLine(client, reply) }
                    if answer.close { return }
                }
            }
        }
    }

    deinit {
        close(listener)
        unlink(path)
        rmdir(directory)
    }

    /// The requests received so far (after the connection ended: all of them).
    var received: [JSONValue] { requests.value }

    /// Waits (bounded) until the connection is over.
    func waitUntilDone() -> Bool { finished.wait(timeout: .now() + 20) == .success }
}

private func waitReadable(_ fd: Int32, seconds: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, seconds * 1000) == 1
}

private func sendLine(_ fd: Int32, _ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
}

/// `{"id":<the request's id>,"ok":true,"result":<result>}`.
private func ok(_ request: JSONValue, _ result: String = "null") -> String {
    #"{"id":\#(request["id"]?.jsonString ?? "null"),"ok":true,"result":\#(result)}"#
}

private func failure(_ request: JSONValue, _ code: String, _ message: String) -> String {
    #"{"id":\#(request["id"]?.jsonString ?? "null"),"ok":false,"error":{"code":"\#(code)","message":"\#(message)"}}"#
}

struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs akloc to completion (at most 20 s).
private func akloc(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    let process = try start(arguments, environment: environment)
    return try finish(process)
}

private func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: aklocBinary!)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["AKLOC_SOCKET"] = nil
    env["TZ"] = "UTC"
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardOutput = Pipe()
    process.standardError = Pipe()
    try process.run()
    return process
}

private func finish(_ process: Process) throws -> Run {
    let done = DispatchSemaphore(value: 0)
    let stdout = (process.standardOutput as! Pipe).fileHandleForReading
    let stderr = (process.standardError as! Pipe).fileHandleForReading
    let output = Locked<[Data]>([])
    Thread.detachNewThread {
        let out = stdout.readDataToEndOfFile()
        let err = stderr.readDataToEndOfFile()
        output.value = [out, err]
        done.signal()
    }
    guard done.wait(timeout: .now() + 20) == .success else {
        process.terminate()
        throw POSIXError(.ETIMEDOUT)
    }
    process.waitUntilExit()
    let (out, err) = (output.value[0], output.value[1])
    return Run(
        status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
        stderr: String(decoding: err, as: UTF8.self))
}

private let hasBinary = aklocBinary != nil

@Suite(.enabled(if: hasBinary, "the akloc binary is built next to the tests"), .serialized)
struct CLITests {
    @Test func statusHumanAndJSON() throws {
        let status =
            #"{"clients":{"connected":3,"observing":1,"updating":2},"counters":{"badRequests":2,"clientsDropped":1,"deliveries":1442,"eventsCoalesced":4,"fixesReceived":3600},"fix":{"ageSeconds":0.8,"location":{"latitude":52.5123456,"longitude":-5.301234,"mode":"3d","horizontalAccuracy":4.2,"speed":3.1}},"paused":false,"source":{"connected":true,"name":"gpsd://127.0.0.1:2947"},"state":"running","uptimeSeconds":3725.5,"version":"0.1.0"}"#
        for json in [false, true] {
            let daemon = try FakeDaemon { request, _ in Answer(lines: [ok(request, status)]) }
            let run = try akloc(["--socket", daemon.path, "status"] + (json ? ["--json"] : []))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(daemon.waitUntilDone())
            #expect(daemon.received.first?["op"] == "status")
            if json {
                let printed = try JSONValue.parse(Array(run.stdout.utf8.dropLast())).get()
                #expect(printed == (try JSONValue.parse(Array(status.utf8)).get()))
                #expect(run.stdout.filter { $0 == "\n" }.count == 1)
            } else {
                #expect(run.stdout.contains("state:     running"))
                #expect(run.stdout.contains("source:    gpsd://127.0.0.1:2947, connected"))
                #expect(run.stdout.contains("fix:       52.51235 N  5.30123 W, 3d, ±4.2 m, 3.1 m/s, 0.8 s ago"))
                #expect(run.stdout.contains("clients:   3 connected, 2 updating, 1 observing"))
                #expect(
                    run.stdout.contains("3600 fixes, 1442 deliveries, 4 coalesced, 1 clients dropped, 2 bad requests"))
                #expect(run.stdout.contains("aklocd 0.1.0, up 1 h 2 min"))
            }
        }
    }

    @Test func getPrintsTheValue() throws {
        let daemon = try FakeDaemon { request, _ in
            Answer(lines: [#"{"event":"didGetNotification","notification":"paused"}"#, ok(request, #""running""#)])
        }
        let run = try akloc(["get", "state"], environment: ["AKLOC_SOCKET": daemon.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "running\n")
        #expect(daemon.waitUntilDone())
        #expect(daemon.received.first?["keyPath"] == "state")
        #expect(daemon.received.first?["id"] != nil)

        let coordinate = try FakeDaemon { request, _ in
            Answer(lines: [ok(request, #"{"latitude":1.5,"longitude":2.0}"#)])
        }
        let json = try akloc(["--socket=\(coordinate.path)", "get", "myLocation.coordinate"])
        #expect(json.stdout == "{\"latitude\":1.5,\"longitude\":2.0}\n")
    }

    @Test func forbiddenAndNotAuthorizedExit77() throws {
        for (command, code) in [("pause", "forbidden"), ("resume", "forbidden"), ("reload", "forbidden")] {
            let daemon = try FakeDaemon { request, _ in
                Answer(lines: [failure(request, code, "\(command) needs root or the akloc-admin group")])
            }
            let run = try akloc(["--socket", daemon.path, command])
            #expect(run.status == 77)
            #expect(run.stderr.contains("needs root or the akloc-admin group (forbidden)"))
            #expect(daemon.received.first?["op"] == .string(command))
        }
        let daemon = try FakeDaemon { request, _ in Answer(lines: [failure(request, "notAuthorized", "denied")]) }
        #expect(try akloc(["--socket", daemon.path, "request-location"]).status == 77)
    }

    @Test func adminCommandsSucceed() throws {
        for command in ["pause", "resume", "reload"] {
            let daemon = try FakeDaemon { request, _ in Answer(lines: [ok(request)]) }
            let run = try akloc(["--socket", daemon.path, command])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("aklocd "))
        }
    }

    @Test func authorizeSendsTheWireRule() throws {
        let daemon = try FakeDaemon { request, _ in Answer(lines: [ok(request)]) }
        let run = try akloc(["--socket", daemon.path, "authorize", "@staff", "when-in-use"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "@staff: when-in-use\n")
        #expect(daemon.waitUntilDone())
        let request = daemon.received.first
        #expect(request?["op"] == "authorize")
        #expect(request?["subject"] == "@staff")
        #expect(request?["status"] == "whenInUse")
    }

    @Test func requestLocation() throws {
        let location = #"{"latitude":52.5123456,"longitude":5.301234,"speed":3.1,"mode":"3d"}"#
        let daemon = try FakeDaemon { request, _ in Answer(lines: [ok(request, location)]) }
        let run = try akloc(["--socket", daemon.path, "request-location", "--timeout", "2.5"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try JSONValue.parse(Array(run.stdout.utf8.dropLast())).get() == JSONValue.parse(Array(location.utf8)).get())
        #expect(daemon.waitUntilDone())
        #expect(daemon.received.first?["timeout"]?.doubleValue == 2.5)

        let slow = try FakeDaemon { request, _ in Answer(lines: [failure(request, "timeout", "no fix within 1 s")]) }
        let timedOut = try akloc(["--socket", slow.path, "request-location", "--timeout=1"])
        #expect(timedOut.status == 1)
        #expect(timedOut.stderr.contains("no fix within 1 s (timeout)"))
    }

    @Test func watchPrintsEventsExactlyAndExits69WhenTheDaemonStops() throws {
        let events = [
            #"{"event":"didGetFirstLocation","location":{"latitude":52.5123456,"longitude":5.301234,"mode":"3d"}}"#,
            #"{"event":"didUpdateLocation","location":{"latitude":52.51234,"longitude":5.30123,"speed":3.1,"mode":"3d","receivedAt":"2026-11-30T15:09:11.000Z"},"afterTimeInterval":5.0}"#,
            #"{"event":"didGetNotification","notification":"daemonStopping"}"#,
        ]
        let daemon = try FakeDaemon { request, _ in
            Answer(
                lines: [ok(request), events[0], #"{"id":99,"ok":true,"result":null}"#, events[1], events[2]],
                close: true)
        }
        let run = try akloc(["--socket", daemon.path, "watch", "--min", "1", "--distance=10"])
        #expect(run.status == 69)
        #expect(run.stdout == events.joined(separator: "\n") + "\n")
        #expect(run.stderr.contains("aklocd is stopping"))
        let request = daemon.received.first
        #expect(request?["op"] == "startUpdatingLocation")
        #expect(request?["policy"] == ["minInterval": 1.0, "distanceFilter": 10.0])
        #expect(request?["everyEpoch"] == nil)

        let human = try FakeDaemon { request, _ in Answer(lines: [ok(request)] + events, close: true) }
        let humanRun = try akloc(["--socket", human.path, "watch", "--human"])
        #expect(humanRun.status == 69)
        let lines = humanRun.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.count == 3 && lines[0].hasSuffix("  52.51235 N  5.30123 E  first fix"))
        #expect(lines.count == 3 && lines[1] == "15:09:11  52.51234 N  5.30123 E  3.1 m/s  +5.0 s")
        #expect(lines.count == 3 && lines[2].hasSuffix("  daemonStopping"))
    }

    /// The daemon announces the first fix and then delivers it as the first
    /// update; `--human` shows it once, and later updates as they come.
    @Test func humanWatchShowsTheFirstFixOnce() throws {
        let fix = #"{"latitude":52.5,"longitude":5.3,"mode":"3d","receivedAt":"2026-11-30T15:09:06.000Z"}"#
        let later = #"{"latitude":52.6,"longitude":5.3,"mode":"3d","receivedAt":"2026-11-30T15:09:11.000Z"}"#
        let events = [
            #"{"event":"didGetFirstLocation","location":\#(fix)}"#,
            #"{"event":"didUpdateLocation","location":\#(fix)}"#,
            #"{"event":"didUpdateLocation","location":\#(later),"afterTimeInterval":5.0}"#,
        ]
        let daemon = try FakeDaemon { request, _ in Answer(lines: [ok(request)] + events, close: true) }
        let run = try akloc(["--socket", daemon.path, "watch", "--human"])
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(run.stdout)")
        #expect(lines.first?.hasSuffix("52.50000 N  5.30000 E  first fix") == true)
        #expect(lines.last?.hasSuffix("52.60000 N  5.30000 E  +5.0 s") == true)
    }

    @Test func watchKeyPathsObservesEachWithInitial() throws {
        let daemon = try FakeDaemon { request, index in
            let keyPath = request["keyPath"]?.stringValue ?? "?"
            let value = keyPath == "state" ? #""running""# : "3.5"
            return Answer(
                lines: [ok(request), #"{"event":"change","keyPath":"\#(keyPath)","new":\#(value)}"#], close: index == 1)
        }
        let run = try akloc(["--socket", daemon.path, "watch", "state", "myLocation.speed", "--human", "--max", "60"])
        #expect(run.status == 69)
        let lines = run.stdout.split(separator: "\n").map { $0.drop { $0 != " " }.trimmingPrefix("  ") }
        #expect(lines == ["state = running", "myLocation.speed = 3.5"])
        #expect(daemon.received.map { $0["op"] } == ["observe", "observe"])
        #expect(daemon.received.map { $0["options"] } == [["initial"], ["initial"]])
        #expect(daemon.received.last?["policy"] == ["maxInterval": 60.0])
    }

    @Test func watchExitsZeroOnSIGINT() throws {
        let daemon = try FakeDaemon { request, _ in
            Answer(lines: [ok(request), #"{"event":"didGetNotification","notification":"sourceConnected"}"#])
        }
        let process = try start(["--socket", daemon.path, "watch"])
        let stdout = (process.standardOutput as! Pipe).fileHandleForReading.fileDescriptor
        #expect(waitReadable(stdout, seconds: 20), "the first event arrives")
        kill(process.processIdentifier, SIGINT)
        let run = try finish(process)
        #expect(run.status == 0)
        #expect(process.terminationReason == .exit)
        #expect(run.stdout == #"{"event":"didGetNotification","notification":"sourceConnected"}"# + "\n")
        #expect(run.stderr.isEmpty)
    }

    @Test func daemonErrorsDuringWatchStartEndIt() throws {
        let daemon = try FakeDaemon { request, _ in
            Answer(lines: [failure(request, "notAuthorized", "authorization status is denied")])
        }
        let run = try akloc(["--socket", daemon.path, "watch"])
        #expect(run.status == 77)
        #expect(run.stderr.contains("authorization status is denied"))
    }

    /// A path that cannot be a Unix socket address is the user's mistake,
    /// said as such (UnixSocketAddress), not an unreachable daemon.
    @Test func anOverlongSocketPathIsAUsageError() throws {
        let long = "/tmp/" + String(repeating: "x", count: 120)
        let run = try akloc(["--socket", long, "status"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("holds at most 107 bytes, this one has 125"))
    }

    @Test func unreachableDaemonExits69NamingTheSocket() throws {
        let missing = "/tmp/akloc-no-such-dir-\(getpid())/akloc.sock"
        let run = try akloc(["--socket", missing, "status"])
        #expect(run.status == 69)
        #expect(run.stderr.contains(missing))
        #expect(run.stderr.contains("No such file or directory"))
        let viaEnvironment = try akloc(["get", "state"], environment: ["AKLOC_SOCKET": missing])
        #expect(viaEnvironment.status == 69)
        #expect(viaEnvironment.stderr.contains(missing))

        // A socket file nobody listens on: ECONNREFUSED.
        let daemon = try FakeDaemon { _, _ in Answer(lines: []) }
        let refused = daemon.directory + "/stale.sock"
        close(TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: refused))
        defer { unlink(refused) }
        let stale = try akloc(["--socket", refused, "pause"])
        #expect(stale.status == 69)
        #expect(stale.stderr.contains("Connection refused"))
    }

    @Test func daemonClosingBeforeReplyExits69() throws {
        let daemon = try FakeDaemon { _, _ in Answer(lines: [], close: true) }
        let run = try akloc(["--socket", daemon.path, "status"])
        #expect(run.status == 69)
        #expect(run.stderr.contains("closed the connection"))
    }

    @Test func wrongProtocolExits1() throws {
        let daemon = try FakeDaemon(
            greeting: #"{"event":"hello","protocol":2,"version":"9","authorizationStatus":"x"}"#
        ) {
            request, _ in Answer(lines: [ok(request)])
        }
        let run = try akloc(["--socket", daemon.path, "status"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("protocol 2"))
    }

    @Test(arguments: [
        [String](), ["frob"], ["--frob"], ["status", "extra"], ["status", "--yaml"], ["get"], ["get", "a", "b"],
        ["get", "myLocation.bogus"], ["watch", "nope"], ["watch", "--min"], ["watch", "--min", "x"],
        ["watch", "--min", "-1"], ["watch", "--min", "10", "--max", "5"], ["watch", "--speed", "inf"],
        ["watch", "state", "--every-epoch"], ["watch", "--max", "1e9"], ["request-location", "--timeout", "0"],
        ["request-location", "--timeout", "4000"], ["authorize", "alice"], ["authorize", "alice", "sometimes"],
        ["authorize", "a b", "deny"], ["pause", "now"], ["--socket"], ["--socket=", "status"], ["help", "frob"],
    ])
    func usageErrorsExit64(arguments: [String]) throws {
        let run = try akloc(arguments + ["--socket", "/nonexistent/never-connected.sock"])
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(!run.stderr.isEmpty)
        #expect(run.stdout.isEmpty)
    }

    @Test func helpEverywhere() throws {
        let overview = try akloc(["--help"])
        #expect(overview.status == 0)
        for name in ["status", "watch", "get", "request-location", "pause", "resume", "reload", "authorize", "help"] {
            #expect(overview.stdout.contains("  \(name) "))
            for form in [[name, "--help"], [name, "-h"], ["help", name]] {
                let run = try akloc(form)
                #expect(run.status == 0)
                #expect(run.stdout.contains("Usage: akloc \(name)"), "\(form)")
            }
        }
        #expect(try akloc(["help"]).stdout == overview.stdout)
        let version = try akloc(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("akloc "))
    }
}
