import AklocCore
import CPosix
import Glibc

/// A listening TCP socket (IPv4 or IPv6) and the non-blocking `accept` of
/// its connections: `akloc map`'s page server, through a `StreamServer`.
/// Reads and writes on the accepted sockets go through
/// `UnixStreamSocket.receive`/`send`, which are plain `recv`/`send` and
/// work on any stream socket.
public struct TCPListener: StreamListener {
    public let descriptor: FileDescriptor

    /// A numeric host and port, as `--listen` names them.
    public struct Address: Hashable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: UInt16

        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// `127.0.0.1:8947`, `[::1]:8947` or `:8947` (loopback): `HostPort`'s
        /// grammar with a port (0 picks a free one) and a numeric host, as
        /// only an address can be bound; nil for anything else.
        public init?(parsing text: String) {
            guard let parsed = try? HostPort(parsing: text, allowsPortZero: true), let port = parsed.port else {
                return nil
            }
            let host = parsed.host.isEmpty ? "127.0.0.1" : parsed.host
            guard Self.isNumeric(host) else { return nil }
            self.host = host
            self.port = port
        }

        public var isIPv6: Bool { host.contains(":") }

        /// Whether only this machine can reach it (127.0.0.0/8 or ::1).
        public var isLoopback: Bool { isIPv6 ? host == "::1" : host.hasPrefix("127.") }

        public var description: String { HostPort(host: host, port: port).description }

        private static func isNumeric(_ host: String) -> Bool {
            var storage = in6_addr()
            let family = host.contains(":") ? AF_INET6 : AF_INET
            return inet_pton(family, host, &storage) == 1
        }
    }

    /// A non-blocking, close-on-exec socket listening on `address`; port 0
    /// picks a free one (see `boundPort`).
    public static func listen(on address: Address, backlog: Int32 = 128) throws(Errno) -> TCPListener {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = try Syscall.retryingOnEINTR {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        }
        let descriptor = FileDescriptor(adopting: fd)
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            var in6 = sockaddr_in6()
            in6.sin6_family = sa_family_t(AF_INET6)
            in6.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &in6.sin6_addr)
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            try Syscall.retryingOnEINTR {
                withUnsafePointer(to: &in6) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
        } else {
            var in4 = sockaddr_in()
            in4.sin_family = sa_family_t(AF_INET)
            in4.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &in4.sin_addr)
            try Syscall.retryingOnEINTR {
                withUnsafePointer(to: &in4) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
        try Syscall.retryingOnEINTR { Glibc.listen(fd, backlog) }
        return TCPListener(descriptor: descriptor)
    }

    /// The port the socket is bound to.
    public func boundPort() throws(Errno) -> UInt16 {
        let fd = descriptor.rawValue
        var storage = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        try Syscall.retryingOnEINTR {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        // sin_port and sin6_port sit at the same offset.
        return UInt16(bigEndian: storage.sin6_port)
    }

    /// The next pending connection, non-blocking and close-on-exec; nil
    /// when none is waiting. A peer that reset before its accept is skipped.
    public func accept() throws(SocketError) -> (UnixStreamSocket, Void)? {
        let flags = Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        while true {
            do {
                let client = try Syscall.retryingOnEINTR { accept4(descriptor.rawValue, nil, nil, flags) }
                return (UnixStreamSocket(FileDescriptor(adopting: client)), ())
            } catch {
                switch error.rawValue {
                case ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return nil
                default: throw SocketError(.accept, path: nil, error)
                }
            }
        }
    }

    public func close(then: (() -> Void)? = nil) {
        descriptor.close(then: then)
    }
}
