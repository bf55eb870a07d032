import AklocPosix
import CSystemd
import Dispatch
import Glibc

/// A connection to the D-Bus system bus through sd-bus (libsystemd), driven
/// from one serial queue: the bus socket is watched with a `FileDescriptor`
/// (the queue's epoll, issue 18), and every readiness runs `sd_bus_process`
/// until it has nothing left, then re-arms for what sd-bus waits on.
///
/// Only synchronous calls are made on it (RequestName, the bus's credential
/// lookups), so sd-bus's own timeout (`sd_bus_get_timeout`) never matters
/// between events: nothing asynchronous is ever pending.
///
/// Confinement: created and used on `queue` only.
public final class BusConnection {
    /// What `RequestName` got.
    public enum NameRequest: Equatable, Sendable {
        case owned
        /// Another peer has it (GeoClue itself runs).
        case taken
        /// The bus refused (its policy does not let this user own the name).
        case refused(Errno)
    }

    /// A method call for an object tree; returns whether it was handled
    /// (sd-bus answers UnknownMethod for the rest).
    public typealias Handler = (BusMessage) -> Bool

    private let queue: DispatchQueue
    private var bus: OpaquePointer?
    private var descriptor: FileDescriptor?
    private var readWatch: FileDescriptor.Watch?
    private var writeWatch: FileDescriptor.Watch?
    private var slots: [OpaquePointer] = []
    private var boxes: [Box] = []
    private var processing = false

    /// The closure a C callback reaches through its userdata.
    private final class Box {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }

    /// Connects to the system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set (tests
    /// start a private one), else /run/dbus/system_bus_socket.
    public init(systemBusOn queue: DispatchQueue) throws(Errno) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.queue = queue
        var pointer: OpaquePointer?
        try Syscall.retryingNegativeErrnoOnEINTR { sd_bus_open_system(&pointer) }
        guard let pointer else { throw Errno.invalidArgument }
        bus = pointer
    }

    deinit {
        close()
    }

    /// The unique name the bus gave this connection (":1.42").
    public var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Asks for a well-known name, without queueing for it.
    public func requestName(_ name: String) -> NameRequest {
        guard let bus else { return .refused(Errno.badFileDescriptor) }
        let result = sd_bus_request_name(bus, name, 0)
        switch -result {
        case _ where result >= 0, EALREADY: return .owned
        case EEXIST: return .taken
        default: return .refused(Errno(rawValue: -result))
        }
    }

    /// Routes every method call to `prefix` and the objects below it to `handler`.
    public func addObjectTree(_ prefix: String, handler: @escaping Handler) throws(Errno) {
        guard let bus else { throw Errno.badFileDescriptor }
        let box = Box(handler)
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        let result = sd_bus_add_fallback(bus, &slot, prefix, BusConnection.dispatch, userdata)
        if result < 0 { throw Errno(rawValue: -result) }
        keep(slot, box)
    }

    /// Calls `handler` with each name whose owner changes (`NameOwnerChanged`:
    /// name, old owner, new owner; "" for none). A peer leaving the bus shows
    /// as its unique name losing its owner.
    public func onNameOwnerChanged(_ handler: @escaping (String, String, String) -> Void) throws(Errno) {
        guard let bus else { throw Errno.badFileDescriptor }
        let box = Box { message in
            guard let name = try? message.readString(), let old = try? message.readString(),
                let new = try? message.readString()
            else { return false }
            handler(name, old, new)
            return false
        }
        var slot: OpaquePointer?
        let result = sd_bus_match_signal(
            bus, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
            BusConnection.dispatch, Unmanaged.passUnretained(box).toOpaque())
        if result < 0 { throw Errno(rawValue: -result) }
        keep(slot, box)
    }

    private func keep(_ slot: OpaquePointer?, _ box: Box) {
        if let slot { slots.append(slot) }
        boxes.append(box)
    }

    private static let dispatch: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
        return box.handler(BusMessage(borrowing: message)) ? 1 : 0
    }

    /// The effective uid and gid of the peer that sent `message`, as the bus
    /// daemon knows them (asked once per call; the bus answers at once).
    public func credentials(of message: BusMessage) throws(Errno) -> (uid: UInt32, gid: UInt32) {
        var creds: OpaquePointer?
        let mask = UInt64(SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_UID | SD_BUS_CREDS_GID)
        let result = sd_bus_query_sender_creds(message.pointer, mask, &creds)
        if result < 0 { throw Errno(rawValue: -result) }
        guard let creds else { throw Errno.invalidArgument }
        defer { sd_bus_creds_unref(creds) }
        var uid: uid_t = 0
        var gid: gid_t = 0
        if sd_bus_creds_get_euid(creds, &uid) < 0 {
            let found = sd_bus_creds_get_uid(creds, &uid)
            if found < 0 { throw Errno(rawValue: -found) }
        }
        if sd_bus_creds_get_egid(creds, &gid) < 0, sd_bus_creds_get_gid(creds, &gid) < 0 { gid = uid_t.max }
        return (uid, gid)
    }

    // MARK: Building and sending

    public func methodReturn(to call: BusMessage) throws(Errno) -> BusMessage {
        var reply: OpaquePointer?
        let result = sd_bus_message_new_method_return(call.pointer, &reply)
        if result < 0 { throw Errno(rawValue: -result) }
        guard let reply else { throw Errno.invalidArgument }
        return BusMessage(adopting: reply)
    }

    public func signal(path: String, interface: String, member: String) throws(Errno) -> BusMessage {
        guard let bus else { throw Errno.badFileDescriptor }
        var signal: OpaquePointer?
        let result = sd_bus_message_new_signal(bus, &signal, path, interface, member)
        if result < 0 { throw Errno(rawValue: -result) }
        guard let signal else { throw Errno.invalidArgument }
        return BusMessage(adopting: signal)
    }

    /// Answers `call` with the D-Bus error `name` (e.g.
    /// "org.freedesktop.DBus.Error.AccessDenied").
    public func replyError(to call: BusMessage, name: String, message: String) {
        var error = sd_bus_error()
        sd_bus_error_set(&error, name, message)
        _ = sd_bus_reply_method_error(call.pointer, &error)
        sd_bus_error_free(&error)
        rearm()
    }

    /// Queues `message`; it leaves as the socket takes it.
    public func send(_ message: BusMessage) {
        guard let bus else { return }
        _ = sd_bus_send(bus, message.pointer, nil)
        rearm()
    }

    // MARK: The event loop

    /// Starts watching the bus socket on the queue.
    public func start() throws(Errno) {
        guard let bus else { throw Errno.badFileDescriptor }
        let fd = sd_bus_get_fd(bus)
        if fd < 0 { throw Errno(rawValue: -fd) }
        // sd-bus owns the socket and closes it with the bus.
        let descriptor = FileDescriptor(adopting: fd, closer: { _ in })
        self.descriptor = descriptor
        readWatch = descriptor.watch(.readable, on: queue) { [weak self] in self?.process() }
        process()
    }

    /// Runs sd-bus until it has nothing left to do, then watches for what
    /// it waits on: always input, output while its queue is not empty.
    private func process() {
        guard let bus, !processing else { return }
        processing = true
        while true {
            let result = sd_bus_process(bus, nil)
            if result <= 0 { break }
        }
        processing = false
        rearm()
    }

    private func rearm() {
        guard let bus, let descriptor, !processing else { return }
        let wantsOutput = sd_bus_get_events(bus) & Int32(POLLOUT) != 0
        switch (wantsOutput, writeWatch) {
        case (true, nil):
            writeWatch = descriptor.watch(.writable, on: queue) { [weak self] in self?.process() }
        case (false, let watch?):
            watch.cancel()
            writeWatch = nil
        default:
            break
        }
    }

    /// Flushes what is queued (a last signal), then drops the connection.
    public func close() {
        guard let bus else { return }
        readWatch = nil
        writeWatch = nil
        descriptor?.close()
        descriptor = nil
        for slot in slots { sd_bus_slot_unref(slot) }
        slots.removeAll()
        boxes.removeAll()
        sd_bus_flush_close_unref(bus)
        self.bus = nil
    }
}
