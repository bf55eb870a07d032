import CPosix
import Glibc

/// A listening Unix stream socket: bound here with a file mode, or passed
/// in by systemd (socket activation). Accepts non-blocking, close-on-exec
/// connections with their peer's credentials. A socket it bound itself has
/// its file removed again at `close`; an activated one belongs to systemd.
public struct UnixListeningSocket {
    public let descriptor: FileDescriptor
    /// The address bound here, nil for an activated socket.
    public let boundAddress: UnixSocketAddress?

    /// Binds and listens on `address` with `mode` (e.g. 0o666). A stale
    /// socket file left by a crashed daemon is removed; one that still
    /// answers is `addressInUse`, not stolen.
    public static func listen(at address: UnixSocketAddress, mode: UInt32, backlog: Int32 = 4096)
        throws(SocketError) -> UnixListeningSocket
    {
        let name = address.description
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        let descriptor: FileDescriptor
        do {
            descriptor = FileDescriptor(adopting: try Syscall.retryingOnEINTR { socket(AF_UNIX, type, 0) })
        } catch {
            throw SocketError(.socket, path: name, error)
        }
        if answers(address) {
            descriptor.close()
            throw SocketError(.addressInUse, path: name, errno: EADDRINUSE)
        }
        if let path = address.path { unlink(path) }
        do {
            // The mode from the start (umask), not after a chmod: no moment
            // in which the socket is open wider than configured.
            let oldMask = umask(mode_t(0o777 & ~mode))
            defer { umask(oldMask) }
            try address.bind(descriptor.rawValue)
        } catch {
            descriptor.close()
            throw SocketError(.bind, path: name, error)
        }
        if let path = address.path { chmod(path, mode_t(mode)) }
        do {
            try Syscall.retryingOnEINTR { Glibc.listen(descriptor.rawValue, backlog) }
        } catch {
            descriptor.close()
            if let path = address.path { unlink(path) }
            throw SocketError(.listen, path: name, error)
        }
        return UnixListeningSocket(descriptor: descriptor, boundAddress: address)
    }

    /// `listen(at:)` for a path.
    public static func listen(path: String, mode: UInt32, backlog: Int32 = 4096) throws(SocketError)
        -> UnixListeningSocket
    {
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: path)
        } catch {
            throw SocketError(error)
        }
        return try listen(at: address, mode: mode, backlog: backlog)
    }

    /// Adopts a socket systemd passed in (already bound and listening),
    /// making it non-blocking.
    public init(activated fd: Int32) throws(SocketError) {
        descriptor = FileDescriptor(adopting: fd)
        boundAddress = nil
        do {
            try descriptor.setNonBlocking()
        } catch {
            throw SocketError(.option, path: nil, error)
        }
    }

    private init(descriptor: FileDescriptor, boundAddress: UnixSocketAddress?) {
        self.descriptor = descriptor
        self.boundAddress = boundAddress
    }

    /// The next pending connection, non-blocking and close-on-exec; nil when
    /// none is waiting. A peer that left before its accept is skipped.
    public func accept() throws(SocketError) -> (UnixStreamSocket, UnixStreamSocket.Credentials)? {
        let flags = Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        while true {
            let client: Int32
            do {
                client = try Syscall.retryingOnEINTR { accept4(descriptor.rawValue, nil, nil, flags) }
            } catch {
                switch error.rawValue {
                case ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return nil
                default: throw SocketError(.accept, path: nil, error)
                }
            }
            let socket = UnixStreamSocket(FileDescriptor(adopting: client))
            do {
                return (socket, try socket.peerCredentials())
            } catch {
                // The peer vanished between connect and accept; nothing to serve.
                socket.close()
            }
        }
    }

    /// Ends the watches and closes the socket, removing the file it bound;
    /// `then` runs after the close.
    public func close(then: (() -> Void)? = nil) {
        descriptor.close(then: then)
        if let path = boundAddress?.path { unlink(path) }
    }

    /// Whether something is listening at `address` now.
    private static func answers(_ address: UnixSocketAddress) -> Bool {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard let probe = try? Syscall.retryingOnEINTR({ socket(AF_UNIX, type, 0) }) else { return false }
        defer { Syscall.close(probe) }
        return (try? address.connect(probe)) != nil
    }
}
