import Glibc

/// A connected Unix stream socket: the daemon's end of a client, and a
/// client's end of the daemon (the CLI, AKLocationManager). Every call goes
/// through `Syscall.retryingOnEINTR` and fails with a typed `SocketError`;
/// the descriptor is a `FileDescriptor`, closed once, after its watches.
/// Receive and send are plain recv/send, so the map server's accepted TCP
/// sockets (`TCPListener`) use them too.
public struct UnixStreamSocket {
    public let descriptor: FileDescriptor
    public var fd: Int32 { descriptor.rawValue }

    public init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Credentials of the peer process, from SO_PEERCRED (DESIGN §2).
    public struct Credentials: Hashable, Sendable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32

        public init(pid: Int32, uid: UInt32, gid: UInt32) {
            self.pid = pid
            self.uid = uid
            self.gid = gid
        }
    }

    /// What a receive got.
    public enum Received: Hashable, Sendable {
        case bytes(Int)
        /// Nothing there now (or, blocking, nothing within the receive timeout).
        case wouldBlock
        /// The peer closed its end (or reset the connection).
        case endOfFile
    }

    /// A close-on-exec stream socket connected to `address`, non-blocking
    /// unless asked otherwise (a blocking caller such as the CLI bounds its
    /// reads with `setReceiveTimeout`). A missing daemon fails with ENOENT
    /// or ECONNREFUSED in `errno`.
    public static func connect(to address: UnixSocketAddress, nonBlocking: Bool = true) throws(SocketError)
        -> UnixStreamSocket
    {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor: FileDescriptor
        do {
            descriptor = FileDescriptor(adopting: try Syscall.retryingOnEINTR { socket(AF_UNIX, type, 0) })
        } catch {
            throw SocketError(.socket, path: address.description, error)
        }
        do {
            // Connected while still blocking: on a Unix socket connect does
            // not wait for the peer, and EINPROGRESS handling is not needed.
            try address.connect(descriptor.rawValue)
        } catch {
            descriptor.close()
            throw SocketError(.connect, path: address.description, error)
        }
        if nonBlocking {
            do {
                try descriptor.setNonBlocking()
            } catch {
                descriptor.close()
                throw SocketError(.option, path: address.description, error)
            }
        }
        return UnixStreamSocket(descriptor)
    }

    /// `connect(to:)` for a path; a path that cannot be an address fails with `invalidAddress`.
    public static func connect(path: String, nonBlocking: Bool = true) throws(SocketError) -> UnixStreamSocket {
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: path)
        } catch {
            throw SocketError(error)
        }
        return try connect(to: address, nonBlocking: nonBlocking)
    }

    /// Reads what is there now into `buffer`; `blocking` waits (up to the
    /// receive timeout) even on a non-blocking socket's blocking twin.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, blocking: Bool = false) throws(SocketError)
        -> Received
    {
        let flags = blocking ? 0 : Int32(MSG_DONTWAIT)
        do {
            let count = try Syscall.retryingOnEINTR { recv(fd, buffer.baseAddress, buffer.count, flags) }
            return count == 0 ? .endOfFile : .bytes(count)
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNRESET: return .endOfFile
            default: throw SocketError(.read, path: nil, error)
            }
        }
    }

    /// Writes what the socket takes now (0 when it would block); never raises SIGPIPE.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int {
        do {
            return try Syscall.retryingOnEINTR {
                Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return 0
            default: throw SocketError(.write, path: nil, error)
            }
        }
    }

    /// Writes all of `bytes`, waiting for room (a blocking socket); never raises SIGPIPE.
    public func sendAll(_ bytes: [UInt8]) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try Syscall.retryingOnEINTR {
                    bytes.withUnsafeBytes {
                        Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                    }
                }
            } catch {
                throw SocketError(.write, path: nil, error)
            }
        }
    }

    /// Bounds each blocking receive (SO_RCVTIMEO); 0 waits forever.
    public func setReceiveTimeout(seconds: Double) throws(SocketError) {
        let whole = seconds.rounded(.down)
        var value = timeval(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
        do {
            try Syscall.retryingOnEINTR {
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
            }
        } catch {
            throw SocketError(.option, path: nil, error)
        }
    }

    public func peerCredentials() throws(SocketError) -> Credentials {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: _GNU_SOURCE, so by layout.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        do {
            try Syscall.retryingOnEINTR { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) }
        } catch {
            throw SocketError(.peerCredentials, path: nil, error)
        }
        guard length == 12 else { throw SocketError(.peerCredentials, path: nil, .invalidArgument) }
        return Credentials(pid: credentials.0, uid: credentials.1, gid: credentials.2)
    }

    /// Ends the watches on the socket and closes it; `then` runs after the close.
    public func close(then: (() -> Void)? = nil) {
        descriptor.close(then: then)
    }
}
