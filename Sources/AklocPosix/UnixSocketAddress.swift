import Glibc

/// The address of a Unix socket (`sockaddr_un`): a filesystem path, or a
/// Linux abstract name. The one place it is built, so every socket in the
/// project checks the same limits and fails with the same error.
public struct UnixSocketAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Name: Hashable, Sendable {
        case path(String)
        /// A name in the abstract namespace (no file; `@name` in ss(8) and systemd).
        case abstract(String)
    }

    public let name: Name
    /// The bytes of `sun_path` that name it: the path's, or a NUL then the abstract name's.
    private let bytes: [UInt8]

    /// `sun_path` holds 108 bytes; a path needs one of them for its NUL.
    public static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
    /// An abstract name has no NUL, but its leading NUL takes a byte.
    public static let maxAbstractNameLength = maxPathLength

    /// A path address. Empty paths, paths with a NUL and paths longer than
    /// `maxPathLength` bytes are refused (bind would truncate or fail obscurely).
    public init(path: String) throws(InvalidAddress) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty else { throw InvalidAddress(.empty, path) }
        guard !bytes.contains(0) else { throw InvalidAddress(.containsNUL, path) }
        guard bytes.count <= Self.maxPathLength else { throw InvalidAddress(.tooLong(bytes.count), path) }
        name = .path(path)
        self.bytes = bytes
    }

    /// An abstract-namespace address (not visible in the filesystem).
    public init(abstractName: String) throws(InvalidAddress) {
        let bytes = Array(abstractName.utf8)
        guard !bytes.isEmpty else { throw InvalidAddress(.empty, "@" + abstractName) }
        guard bytes.count <= Self.maxAbstractNameLength else {
            throw InvalidAddress(.tooLong(bytes.count), "@" + abstractName)
        }
        name = .abstract(abstractName)
        self.bytes = [0] + bytes
    }

    /// Parses systemd's spelling (NOTIFY_SOCKET, ListenStream=): `@name` is abstract.
    public init(parsing text: String) throws(InvalidAddress) {
        if text.hasPrefix("@") {
            try self.init(abstractName: String(text.dropFirst()))
        } else {
            try self.init(path: text)
        }
    }

    /// The filesystem path, nil for an abstract name.
    public var path: String? {
        if case .path(let path) = name { return path }
        return nil
    }

    public var description: String {
        switch name {
        case .path(let path): path
        case .abstract(let name): "@" + name
        }
    }

    /// Calls `body` with the address as bind(2) and connect(2) take it.
    public func withSockaddr<R, E: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R
    ) throws(E) -> R {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
        // A path's length counts its NUL; an abstract name's must not count any padding.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = socklen_t(pathOffset + bytes.count + (path == nil ? 0 : 1))
        return try withUnsafePointer(to: &storage) { pointer throws(E) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(E) in
                try body(address, length)
            }
        }
    }

    /// Binds `fd` to this address.
    public func bind(_ fd: Int32) throws(Errno) {
        _ = try withSockaddr { address, length throws(Errno) in
            try Syscall.retryingOnEINTR { Glibc.bind(fd, address, length) }
        }
    }

    /// Connects `fd` to this address (a Unix socket's connect does not wait for the peer).
    public func connect(_ fd: Int32) throws(Errno) {
        _ = try withSockaddr { address, length throws(Errno) in
            try Syscall.retryingOnEINTR { Glibc.connect(fd, address, length) }
        }
    }

    /// Why a name cannot be a Unix socket address; says so in words.
    public struct InvalidAddress: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Reason: Hashable, Sendable {
            case empty
            case containsNUL
            /// The name's length in bytes.
            case tooLong(Int)
        }

        public var reason: Reason
        public var text: String

        init(_ reason: Reason, _ text: String) {
            self.reason = reason
            self.text = text
        }

        /// What a system call would have said: ENAMETOOLONG, EINVAL.
        public var errno: Errno {
            if case .tooLong = reason { return Errno(rawValue: ENAMETOOLONG) }
            return .invalidArgument
        }

        public var description: String {
            switch reason {
            case .empty: "a Unix socket path must not be empty"
            case .containsNUL: "a Unix socket path must not contain a NUL byte: \(text)"
            case .tooLong(let count):
                "a Unix socket path holds at most \(UnixSocketAddress.maxPathLength) bytes, "
                    + "this one has \(count): \(text)"
            }
        }
    }
}
