import Glibc

/// The client end of a Unix stream socket: connect, and non-blocking
/// receive and send, each through `Syscall.retryingOnEINTR`. The client
/// library (AKLocationManager) uses it.
public enum UnixClientSocket {
    /// What a non-blocking receive got.
    public enum Received: Hashable, Sendable {
        case bytes(Int)
        case wouldBlock
        /// The peer closed its end (or reset the connection).
        case endOfFile
    }

    /// A close-on-exec stream socket connected to `path`, non-blocking
    /// unless asked otherwise (a blocking caller such as the CLI bounds its
    /// reads with SO_RCVTIMEO). A path that does not fit `sun_path` fails
    /// with `ENAMETOOLONG`; a missing daemon with `ENOENT` or `ECONNREFUSED`.
    public static func connect(path: String, nonBlocking: Bool = true) throws(Errno) -> FileDescriptor {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Errno(rawValue: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = try Syscall.retryingOnEINTR {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            // Connected while still blocking: on a Unix socket connect does
            // not wait for the peer, and EINPROGRESS handling is not needed.
            try Syscall.retryingOnEINTR {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            if nonBlocking {
                let flags = try Syscall.retryingOnEINTR { fcntl(fd, F_GETFL) }
                try Syscall.retryingOnEINTR { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
            }
        } catch {
            Syscall.close(fd)
            throw error
        }
        return FileDescriptor(adopting: fd)
    }

    /// Reads what is there now into `buffer`.
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Received {
        do {
            let count = try Syscall.retryingOnEINTR { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) }
            return count == 0 ? .endOfFile : .bytes(count)
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNRESET: return .endOfFile
            default: throw error
            }
        }
    }

    /// Writes what the socket takes now (0 when it would block); never raises SIGPIPE.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        do {
            return try Syscall.retryingOnEINTR {
                Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
        } catch {
            switch error.rawValue {
            case EAGAIN, EWOULDBLOCK: return 0
            default: throw error
            }
        }
    }
}
