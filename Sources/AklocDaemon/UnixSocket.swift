import AklocPosix
import AklocSystemd
import Glibc

/// A socket with the few calls the server needs; every call goes through
/// `Syscall.retryingOnEINTR` and fails with a typed `SocketError`. The
/// descriptor is owned by a `FileDescriptor`, which closes it only after
/// every dispatch source on it is cancelled (issue 18).
struct UnixSocket {
    let descriptor: FileDescriptor
    var fd: Int32 { descriptor.rawValue }

    init(fd: Int32) {
        descriptor = FileDescriptor(adopting: fd)
    }

    /// Credentials of the peer process, from SO_PEERCRED at accept (DESIGN §2).
    struct Credentials: Hashable, Sendable {
        var pid: Int32
        var uid: UInt32
        var gid: UInt32
    }

    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case endOfFile
    }

    /// Binds and listens on `path`. A stale socket file left by a crashed
    /// daemon is removed; one that still answers is an error, not stolen.
    static func listen(path: String, mode: UInt32, backlog: Int32 = 4096) throws(SocketError) -> UnixSocket {
        var address = try SocketAddress(path: path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(.socket, path: path, errno: errno) }
        let listener = UnixSocket(fd: fd)
        if address.answers() {
            listener.close()
            throw SocketError(.addressInUse, path: path, errno: EADDRINUSE)
        }
        unlink(path)
        let oldMask = umask(0o777 & ~mode)
        defer { umask(oldMask) }
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            listener.close()
            throw SocketError(.bind, path: path, errno: code)
        }
        chmod(path, mode_t(mode))
        guard Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            listener.close()
            throw SocketError(.listen, path: path, errno: code)
        }
        return listener
    }

    /// Adopts a socket systemd passed in (already bound and listening).
    static func adopt(fd: Int32) -> UnixSocket {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        return UnixSocket(fd: fd)
    }

    /// The next pending connection, non-blocking and close-on-exec; nil when none is waiting.
    func accept() throws(SocketError) -> (UnixSocket, Credentials)? {
        while true {
            let client: Int32
            do {
                // Glibc's Swift overlay lacks accept4 (it is _GNU_SOURCE), so set the flags after.
                client = try Syscall.retryingOnEINTR { Glibc.accept(fd, nil, nil) }
            } catch {
                switch error.rawValue {
                case ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return nil
                case let code: throw SocketError(.accept, path: nil, errno: code)
                }
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            let socket = UnixSocket(fd: client)
            do {
                return (socket, try socket.peerCredentials())
            } catch {
                // The peer vanished between connect and accept; nothing to serve.
                socket.close()
            }
        }
    }

    func peerCredentials() throws(SocketError) -> Credentials {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: _GNU_SOURCE again, so by layout.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == 12 else {
            throw SocketError(.peerCredentials, path: nil, errno: errno)
        }
        return Credentials(pid: credentials.0, uid: credentials.1, gid: credentials.2)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> ReadResult {
        do {
            let count = try Syscall.retryingOnEINTR { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) }
            return count == 0 ? .endOfFile : .bytes(count)
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNRESET: return .endOfFile
            case let code: throw SocketError(.read, path: nil, errno: code)
            }
        }
    }

    /// Writes what the socket takes now; 0 means it would block.
    func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int {
        do {
            return try Syscall.retryingOnEINTR {
                send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return 0
            case let code: throw SocketError(.write, path: nil, errno: code)
            }
        }
    }

    /// Cancels the sources on the socket and closes it once they are gone;
    /// `then` runs after the close.
    func close(then: (() -> Void)? = nil) {
        descriptor.close(then: then)
    }
}

/// A `sockaddr_un` for a filesystem path.
struct SocketAddress {
    private var storage = sockaddr_un()

    init(path: String) throws(SocketError) {
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SocketError(.pathTooLong, path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
    }

    mutating func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// Whether something is listening at this path now.
    mutating func answers() -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { _ = Glibc.close(probe) }
        return withSockaddr { connect(probe, $0, $1) } == 0
    }
}

/// A failed socket call: a stable `code`, the errno, and a message for people.
struct SocketError: Error, CustomStringConvertible {
    enum Code: String, Sendable {
        case socket, bind, listen, accept, read, write, peerCredentials, pathTooLong, addressInUse
    }

    var code: Code
    var path: String?
    var errno: Int32

    init(_ code: Code, path: String?, errno: Int32) {
        self.code = code
        self.path = path
        self.errno = errno
    }

    /// The peer closed its end (EPIPE, ECONNRESET): it left, nothing failed.
    var isPeerGone: Bool { errno == EPIPE || errno == ECONNRESET }

    var description: String {
        let reason = code == .addressInUse ? "another daemon is serving it" : String(cString: strerror(errno))
        return "\(code.rawValue)\(path.map { " \($0)" } ?? ""): \(reason)"
    }
}
