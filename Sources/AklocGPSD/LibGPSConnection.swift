import AklocCore
import AklocPosix
import CGPS

#if canImport(Glibc)
    import Glibc
#endif

/// One libgps socket connection: the only place that calls into libgps.
///
/// What libgps 3.22 (Debian 12) does, checked against a fake server and gpsd:
/// - `gps_read` returns the length of one line (with its "\n") once a full
///   line is buffered, whatever the line holds: garbage and truncated JSON
///   are not reported as errors, hence `GPSDLine`.
/// - It returns 0 when only part of a line has arrived; the part stays in
///   libgps's 20 KiB buffer. On a blocking socket it would instead block in
///   recv, so the socket is switched to O_NONBLOCK; `gps_waiting` says "true"
///   for a buffered partial line, so it cannot end a read loop.
/// - It returns -1 on EOF (errno 0, even with a partial line buffered), on a
///   recv error (errno set), and when its buffer fills up without a newline
///   (errno 0, data still queued in the kernel: a line over ~20 KiB).
final class LibGPSConnection {
    enum ReadResult {
        /// A line of `count` bytes, read in place with `withLine` (no copy).
        case line(count: Int)
        /// No complete line yet.
        case incomplete
        case failed(GPSDError)
    }

    /// Larger than libgps's own line buffer, so `strlcpy` never truncates.
    private static let messageCapacity = 32 * 1024

    private let data: UnsafeMutablePointer<gps_data_t>
    private var message: [CChar]
    private var lineLength = 0
    private(set) var isOpen = false
    let fd: Int32

    /// Connects (a blocking TCP connect, short on loopback) and makes the socket non-blocking.
    init(endpoint: GPSDEndpoint) throws(GPSDError) {
        data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        message = [CChar](repeating: 0, count: LibGPSConnection.messageCapacity)
        let status = gps_open(endpoint.host, String(endpoint.port), data)
        if status != 0 {
            let code = errno
            let reason = gps_errstr(code).map { String(cString: $0) } ?? "error \(code)"
            data.deinitialize(count: 1)
            data.deallocate()
            throw GPSDError(.connectFailed, "cannot connect to gpsd at \(endpoint): \(reason)")
        }
        fd = data.pointee.gps_fd
        isOpen = true
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 {
            let code = errno
            close()
            throw GPSDError(.connectFailed, "cannot make the gpsd socket non-blocking: \(errnoText(code))")
        }
    }

    deinit {
        close()
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        gps_close(data)
        data.deinitialize(count: 1)
        data.deallocate()
    }

    /// ?WATCH={"enable":true,"json":true} or {"enable":false}.
    func stream(watch: Bool) throws(GPSDError) {
        let flags = watch ? (akloc_WATCH_ENABLE | akloc_WATCH_JSON) : akloc_WATCH_DISABLE
        var code: Int32 = 0
        let status = withSIGPIPEBlocked {
            errno = 0
            let status = gps_stream(data, flags, nil)
            code = errno
            return status
        }
        if status != 0 {
            throw GPSDError(.streamFailed, "cannot send ?WATCH to gpsd: \(errnoText(code))")
        }
    }

    func read() -> ReadResult {
        errno = 0
        let length = message.withUnsafeMutableBufferPointer { buffer in
            gps_read(data, buffer.baseAddress, Int32(buffer.count))
        }
        let code = errno
        if length > 0 {
            let count = message.withUnsafeBufferPointer { strnlen($0.baseAddress!, $0.count) }
            // libgps copies with strlcpy, so an embedded NUL cuts the copy short.
            if count + 1 != Int(length) {
                return .failed(GPSDError(.protocolError, "line with a NUL byte from gpsd"))
            }
            lineLength = count
            return .line(count: count)
        }
        if length == 0 { return .incomplete }
        if code != 0 { return .failed(GPSDError(.readFailed, "reading from gpsd: \(errnoText(code))")) }
        var byte: UInt8 = 0
        if recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0 {
            return .failed(GPSDError(.lineTooLong, "gpsd sent a line longer than libgps's 20 KiB buffer"))
        }
        return .failed(GPSDError(.closedByPeer, "gpsd closed the connection"))
    }

    /// The bytes of the last line `read()` returned, valid only inside `body`.
    func withLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        message.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UInt8.self) { body(UnsafeBufferPointer(rebasing: $0[0..<lineLength])) }
        }
    }

    /// The TPV that the last `read()` line held.
    var tpv: TPVReport { TPVReport(data) }

    /// The SKY that the last `read()` line held.
    var sky: SKYReport { SKYReport(data) }

    /// `release` of the last VERSION line.
    var versionRelease: String { cString(data.pointee.version.release) }

    /// The message of the last ERROR line.
    var errorMessage: String { cString(data.pointee.error) }
}

/// Runs `body` with SIGPIPE blocked on this thread, and discards a SIGPIPE
/// it raised. libgps writes commands with write(2), not send(MSG_NOSIGNAL): on
/// a socket gpsd has already closed, that raises SIGPIPE, whose default action
/// kills the whole daemon. Blocked, the write just fails with EPIPE.
func withSIGPIPEBlocked<T>(_ body: () -> T) -> T {
    let pipeOnly = SignalSet([.pipe])
    return SignalMask.withBlocked(pipeOnly) { previous in
        let result = body()
        // Only if SIGPIPE was not already blocked is a pending one ours to consume.
        if !previous.contains(.pipe), SignalSet.pending().contains(.pipe) { pipeOnly.takePending() }
        return result
    }
}

func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}
