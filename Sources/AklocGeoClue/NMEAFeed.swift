import AklocCore
import AklocPosix
import Dispatch

/// `[geoclue] nmea-socket`: a Unix socket where each reader gets one GGA and
/// one RMC sentence per epoch (`NMEASentences`), which is what GeoClue
/// 2.6+'s `nmea-socket=` source reads.
///
/// A reader that cannot take an epoch whole keeps the rest queued and skips
/// the epochs that come meanwhile, so each reader holds at most one epoch
/// and always sees whole sentences. What a reader sends is read and dropped.
public final class NMEAFeed: Component {
    public let name = "NMEA feed"
    /// Called when the first reader arrives (true) and the last leaves (false).
    public var readersChanged: (Bool) -> Void = { _ in }
    private let path: String
    private let mode: UInt32
    private let queue: DispatchQueue
    private let log: (LogLevel, String) -> Void
    private var listener: UnixListeningSocket?
    private var listenWatch: FileDescriptor.Watch?
    private var readers: [ObjectIdentifier: Reader] = [:]

    private final class Reader {
        let socket: UnixStreamSocket
        var pending: [UInt8] = []
        var readWatch: FileDescriptor.Watch?
        var writeWatch: FileDescriptor.Watch?

        init(_ socket: UnixStreamSocket) { self.socket = socket }
    }

    public init(path: String, mode: UInt32, queue: DispatchQueue, log: @escaping (LogLevel, String) -> Void) {
        self.path = path
        self.mode = mode
        self.queue = queue
        self.log = log
    }

    public var readerCount: Int { readers.count }

    public func start() throws(ComponentError) {
        let listener: UnixListeningSocket
        do {
            listener = try UnixListeningSocket.listen(path: path, mode: mode, backlog: 64)
        } catch {
            throw ComponentError(.cannotListen, component: name, "\(error)")
        }
        self.listener = listener
        listenWatch = listener.descriptor.watch(.readable, on: queue) { [weak self] in self?.acceptPending() }
        log(.notice, "serving NMEA on \(path)")
    }

    public func stop() {
        for reader in readers.values { reader.socket.close() }
        readers.removeAll()
        listenWatch = nil
        // Closing the listener removes its file.
        listener?.close()
        listener = nil
    }

    private func acceptPending() {
        guard let listener else { return }
        let before = readers.count
        while true {
            let accepted: (UnixStreamSocket, UnixStreamSocket.Credentials)?
            do {
                accepted = try listener.accept()
            } catch {
                // EMFILE and friends: wait for a reader to leave or the next epoch.
                log(.warning, "NMEA feed: accept failed (\(error)); retrying with the next epoch")
                listenWatch?.suspend()
                break
            }
            guard let (socket, _) = accepted else { break }
            let reader = Reader(socket)
            let key = ObjectIdentifier(reader)
            readers[key] = reader
            reader.readWatch = socket.descriptor.watch(.readable, on: queue) { [weak self] in self?.drain(key) }
        }
        if before == 0, !readers.isEmpty { readersChanged(true) }
    }

    /// Reads and drops what a reader sends; its end of file closes it.
    private func drain(_ key: ObjectIdentifier) {
        guard let reader = readers[key] else { return }
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let result = try? buffer.withUnsafeMutableBytes { try reader.socket.receive(into: $0) }
            switch result {
            case .bytes?: continue
            case .wouldBlock?: return
            case .endOfFile?, nil: return close(key)
            }
        }
    }

    /// One epoch to every reader.
    public func write(_ location: Location) {
        listenWatch?.resume()
        guard !readers.isEmpty else { return }
        let bytes = Array(NMEASentences.epoch(location).utf8)
        for (key, reader) in readers where reader.pending.isEmpty {
            reader.pending = bytes
            flush(key)
        }
    }

    private func flush(_ key: ObjectIdentifier) {
        guard let reader = readers[key] else { return }
        while !reader.pending.isEmpty {
            let written: Int
            do {
                written = try reader.pending.withUnsafeBytes { try reader.socket.send($0) }
            } catch {
                return close(key)
            }
            if written == 0 {
                if reader.writeWatch == nil {
                    reader.writeWatch = reader.socket.descriptor.watch(.writable, on: queue) { [weak self] in
                        self?.flush(key)
                    }
                }
                return
            }
            reader.pending.removeFirst(written)
        }
        reader.writeWatch?.cancel()
        reader.writeWatch = nil
    }

    private func close(_ key: ObjectIdentifier) {
        guard let reader = readers.removeValue(forKey: key) else { return }
        reader.socket.close()
        listenWatch?.resume()
        if readers.isEmpty { readersChanged(false) }
    }
}
