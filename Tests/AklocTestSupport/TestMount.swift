import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs of its own for one test (root only: mount(8)), so code runs
/// against a really full or really read-only filesystem. Unmounted (lazily,
/// if something still holds it) and its directory removed by `unmount()`
/// and at deinit, also when the test failed.
public final class TestMount: @unchecked Sendable {
    public enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Every byte used: writes fail with ENOSPC.
        case full
        /// Remounted read-only: writes fail with EROFS.
        case readOnly

        public var description: String { rawValue }
        /// The errno name a write fails with.
        public var errnoName: String { self == .full ? "ENOSPC" : "EROFS" }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let path: String
    private var mounted = false
    private var fillerPath: String { path + "/.filler" }

    /// Whether this process may mount (root, with CAP_SYS_ADMIN).
    public static var available: Bool { geteuid() == 0 && TestProcess.which("mount") != nil }

    /// Run when possible, and under `AKLOC_REQUIRE_TOOLS=1` always (so a
    /// machine that cannot mount fails instead of skipping).
    public static var shouldRun: Bool { available || GPSDTools.required }

    public init(sizeKiB: Int = 64) throws {
        var template = Array("/tmp/akloc-mount.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure(description: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
        do {
            try Self.run(["mount", "-t", "tmpfs", "-o", "size=\(sizeKiB)k,mode=0755", "tmpfs", path])
        } catch {
            rmdir(path)
            throw error
        }
        mounted = true
    }

    deinit { unmount() }

    /// Makes the filesystem fail writes the way `fault` does.
    public func inject(_ fault: Fault) throws {
        switch fault {
        case .full:
            // Until the kernel says no: then not even one more page fits.
            let fd = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            guard fd >= 0 else { throw Failure(description: "open \(fillerPath): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0x41, count: 4096)
            var size = 4096
            while size > 0 {
                if chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) < 0 {
                    guard errno == ENOSPC else {
                        throw Failure(description: "fill: \(String(cString: strerror(errno)))")
                    }
                    size /= 2
                }
            }
        case .readOnly:
            try Self.run(["mount", "-o", "remount,ro", path])
        }
    }

    /// Undoes `fault`: room again, or writable again.
    public func repair(_ fault: Fault) throws {
        switch fault {
        case .full:
            guard unlink(fillerPath) == 0 else {
                throw Failure(description: "unlink: \(String(cString: strerror(errno)))")
            }
        case .readOnly:
            try Self.run(["mount", "-o", "remount,rw", path])
        }
    }

    public func unmount() {
        guard mounted else { return }
        mounted = false
        if (try? Self.run(["umount", path])) == nil { _ = try? Self.run(["umount", "-l", path]) }
        rmdir(path)
    }

    private static func run(_ command: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestProcess.which(command[0]) ?? "/usr/bin/\(command[0])")
        process.arguments = Array(command.dropFirst())
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw Failure(description: "\(command.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
    }
}
