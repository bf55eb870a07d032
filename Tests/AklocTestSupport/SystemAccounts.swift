import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Real users and groups for authorization tests (DESIGN §6): made with
/// `useradd`/`groupadd` under unique `aktest-…` names, and all removed by
/// `removeAll()` (also at deinit), whatever the test did. Needs root.
public final class SystemAccounts: @unchecked Sendable {
    // @unchecked: used from one test at a time; the lists are guarded by `lock`.

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public struct User: Sendable, Hashable {
        public var name: String
        public var uid: UInt32
        /// The primary group (useradd's user-private group).
        public var gid: UInt32
    }

    public struct Group: Sendable, Hashable {
        public var name: String
        public var gid: UInt32
    }

    /// Whether this process may create accounts (root, with the shadow tools).
    public static var available: Bool {
        geteuid() == 0
            && ["useradd", "userdel", "groupadd", "groupdel", "usermod", "setpriv"].allSatisfy {
                TestProcess.which($0) != nil || access("/usr/sbin/\($0)", X_OK) == 0
            }
    }

    public static var unavailableMessage: String {
        "needs root with useradd, groupadd, usermod and setpriv (util-linux, passwd)"
    }

    private let lock = NSLock()
    private var users: [String] = []
    private var groups: [String] = []
    private let prefix: String
    private var counter = 0

    public init() {
        // "aktest-" + 6 hex digits + "-" + a counter stays far under the 32-byte limit.
        prefix = "aktest-" + String(UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(6))
    }

    deinit { removeAll() }

    private func nextName() -> String {
        lock.lock()
        defer { lock.unlock() }
        counter += 1
        return "\(prefix)-\(counter)"
    }

    /// A new user without a home and without a login shell.
    public func addUser() throws -> User {
        let name = nextName()
        try Self.run("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", name])
        lock.lock()
        users.append(name)
        lock.unlock()
        guard let user = Self.lookUpUser(name) else { throw Failure(description: "useradd made no \(name)") }
        return user
    }

    public func addGroup() throws -> Group {
        let name = nextName()
        try Self.run("groupadd", [name])
        lock.lock()
        groups.append(name)
        lock.unlock()
        guard let gid = Self.lookUpGroup(name) else { throw Failure(description: "groupadd made no \(name)") }
        return Group(name: name, gid: gid)
    }

    /// Adds `user` to `group` as a supplementary member (`usermod -aG`).
    public func add(_ user: User, to group: Group) throws {
        try Self.run("usermod", ["-aG", group.name, user.name])
    }

    /// Deletes every user (with its private group) and group made here.
    public func removeAll() {
        lock.lock()
        let (users, groups) = (self.users, self.groups)
        self.users = []
        self.groups = []
        lock.unlock()
        for name in users.reversed() { try? Self.run("userdel", [name]) }
        for name in groups.reversed() { try? Self.run("groupdel", [name]) }
    }

    /// Names of accounts with this object's prefix still in the databases (should be none after `removeAll`).
    public var leftovers: [String] {
        ["/etc/passwd", "/etc/group"].flatMap { file -> [String] in
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                line.hasPrefix(prefix + "-") ? String(line.prefix { $0 != ":" }) : nil
            }
        }
    }

    /// Runs a shadow tool. Another process editing the account files at the
    /// same time (a parallel test run, a package install) makes it fail with
    /// "cannot lock": that is retried a few times, 100 ms apart.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let path = TestProcess.which(tool) ?? "/usr/sbin/\(tool)"
        for attempt in 1...10 {
            let process = try TestProcess(path, arguments)
            guard let code = process.waitForExit(timeout: 30) else {
                throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) did not finish")
            }
            if code == 0 { return }
            let stderr = process.stderr()
            guard stderr.contains("lock"), attempt < 10 else {
                throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(code): \(stderr)")
            }
            usleep(100_000)
        }
    }

    static func lookUpUser(_ name: String) -> User? {
        var record = passwd()
        var buffer = [CChar](repeating: 0, count: 16_384)
        var result: UnsafeMutablePointer<passwd>?
        guard getpwnam_r(name, &record, &buffer, buffer.count, &result) == 0, let entry = result else { return nil }
        return User(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    static func lookUpGroup(_ name: String) -> UInt32? {
        var record = group()
        var buffer = [CChar](repeating: 0, count: 65_536)
        var result: UnsafeMutablePointer<group>?
        guard getgrnam_r(name, &record, &buffer, buffer.count, &result) == 0, let entry = result else { return nil }
        return entry.pointee.gr_gid
    }
}

/// Connections made by a process running as another user (`setpriv`), so
/// the daemon's SO_PEERCRED names that user, then handed back to the test
/// with SCM_RIGHTS. The kernel records a Unix socket's peer credentials at
/// connect(2): whatever process later reads and writes the socket, the
/// daemon keeps seeing the user who connected. The connecting process also
/// proves that user can reach the socket through its directory's permissions.
public enum PeerConnector {
    /// The helper, run as the user: connects `count` times to the socket and
    /// sends the descriptors back over fd 3 (a SOCK_SEQPACKET pair, so each
    /// batch stays one message), at most 200 per message (SCM_MAX_FD is 253).
    static let script = """
        import socket, sys
        path, count = sys.argv[1], int(sys.argv[2])
        channel = socket.socket(fileno=3)
        connections = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            connections.append(s)
        for start in range(0, count, 200):
            batch = connections[start:start + 200]
            socket.send_fds(channel, [b"%d" % len(batch)], [s.fileno() for s in batch])
        channel.close()
        """

    public static let python = "/usr/bin/python3"

    /// `count` connections to `socketPath` as `uid`/`gid` with no
    /// supplementary groups (the daemon looks groups up by user name anyway).
    public static func connect(
        _ socketPath: String, uid: UInt32, gid: UInt32, count: Int = 1, timeout: Double = 60
    ) throws -> [SocketClient] {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw SocketClient.Failure("socketpair: \(String(cString: strerror(errno)))")
        }
        defer { close(pair[0]) }
        let helper: TestProcess
        do {
            defer { close(pair[1]) }
            helper = try TestProcess(
                TestProcess.which("setpriv") ?? "/usr/bin/setpriv",
                [
                    "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", python, "-I", "-c", script,
                    socketPath, String(count),
                ], passing: [3: pair[1]])
        }
        defer { helper.kill() }
        var clients: [SocketClient] = []
        let deadline = Date().addingTimeInterval(timeout)
        while clients.count < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw SocketClient.Failure(
                    "got \(clients.count) of \(count) connections as uid \(uid) in \(timeout) s: \(helper.stderr())")
            }
            var poller = pollfd(fd: pair[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000) + 1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let received = try receiveDescriptors(pair[0])
            guard !received.isEmpty else {
                throw SocketClient.Failure(
                    "the helper as uid \(uid) stopped after \(clients.count) of \(count) connections "
                        + "(exit \(helper.waitForExit(timeout: 5) ?? -1)): \(helper.stderr())")
            }
            clients += received.map { SocketClient(adopting: $0) }
        }
        return clients
    }

    /// One message's SCM_RIGHTS descriptors (close-on-exec), or none at end of file.
    private static func receiveDescriptors(_ fd: Int32) throws -> [Int32] {
        let headerSize = MemoryLayout<cmsghdr>.size
        var control = [UInt8](repeating: 0, count: headerSize + 256 * MemoryLayout<Int32>.size)
        var data = [UInt8](repeating: 0, count: 16)
        let count = data.withUnsafeMutableBytes { dataBytes in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: dataBytes.baseAddress, iov_len: dataBytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let result = recvmsg(fd, &message, Int32(MSG_CMSG_CLOEXEC))
                    return result < 0 ? -1 : Int(message.msg_controllen)
                }
            }
        }
        guard count >= 0 else { throw SocketClient.Failure("recvmsg: \(String(cString: strerror(errno)))") }
        guard count >= headerSize else { return [] }
        return control.withUnsafeBytes { bytes -> [Int32] in
            let header = bytes.loadUnaligned(as: cmsghdr.self)
            guard header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) else { return [] }
            let fds = (Int(header.cmsg_len) - headerSize) / MemoryLayout<Int32>.size
            return (0..<fds).map { bytes.loadUnaligned(fromByteOffset: headerSize + $0 * 4, as: Int32.self) }
        }
    }
}
