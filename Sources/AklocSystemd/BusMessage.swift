import AklocPosix
import CSystemd
import Glibc

/// One sd-bus message (`sd_bus_message *`), held by reference count: a call
/// being answered, or a reply or signal being built. Reading and appending
/// go through the basic, non-variadic calls; every failure is an `Errno`.
///
/// Confinement: used on the bus connection's queue only.
public final class BusMessage {
    let pointer: OpaquePointer

    /// Takes a new reference on `pointer` (a callback's borrowed message).
    init(borrowing pointer: OpaquePointer) {
        self.pointer = sd_bus_message_ref(pointer)
    }

    /// Adopts the reference `pointer` came with (a message just created).
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        sd_bus_message_unref(pointer)
    }

    public var sender: String? { sd_bus_message_get_sender(pointer).map { String(cString: $0) } }
    public var path: String? { sd_bus_message_get_path(pointer).map { String(cString: $0) } }
    public var interface: String? { sd_bus_message_get_interface(pointer).map { String(cString: $0) } }
    public var member: String? { sd_bus_message_get_member(pointer).map { String(cString: $0) } }
    /// The full signature of the body ("" for none).
    public var signature: String { sd_bus_message_get_signature(pointer, 1).map { String(cString: $0) } ?? "" }
    public var isMethodCall: Bool {
        var type: UInt8 = 0
        return sd_bus_message_get_type(pointer, &type) >= 0 && Int(type) == SD_BUS_MESSAGE_METHOD_CALL
    }
    /// Whether the caller asked for no reply (a fire-and-forget call).
    public var expectsReply: Bool { sd_bus_message_get_expect_reply(pointer) > 0 }

    // MARK: Reading

    public func readString() throws(Errno) -> String { try readText("s") }
    public func readObjectPath() throws(Errno) -> String { try readText("o") }

    public func readUInt32() throws(Errno) -> UInt32 {
        var value: UInt32 = 0
        try check(sd_bus_message_read_basic(pointer, CChar(UInt8(ascii: "u")), &value))
        return value
    }

    public func readBool() throws(Errno) -> Bool {
        var value: Int32 = 0
        try check(sd_bus_message_read_basic(pointer, CChar(UInt8(ascii: "b")), &value))
        return value != 0
    }

    private func readText(_ type: Unicode.Scalar) throws(Errno) -> String {
        var value: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(pointer, CChar(UInt8(ascii: type)), &value))
        guard let value else { throw Errno.invalidArgument }
        return String(cString: value)
    }

    /// The signature inside the variant at the read position.
    public func peekVariantContents() throws(Errno) -> String {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        try check(sd_bus_message_peek_type(pointer, &type, &contents))
        guard type == CChar(UInt8(ascii: "v")), let contents else { throw Errno.invalidArgument }
        return String(cString: contents)
    }

    public func enterVariant(_ contents: String) throws(Errno) {
        try check(sd_bus_message_enter_container(pointer, CChar(UInt8(ascii: "v")), contents))
    }

    public func exitContainer() throws(Errno) {
        try check(sd_bus_message_exit_container(pointer))
    }

    // MARK: Appending

    public func append(string: String) throws(Errno) { try appendText("s", string) }
    public func append(objectPath: String) throws(Errno) { try appendText("o", objectPath) }

    public func append(uint32: UInt32) throws(Errno) {
        var value = uint32
        try check(sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "u")), &value))
    }

    public func append(uint64: UInt64) throws(Errno) {
        var value = uint64
        try check(sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "t")), &value))
    }

    public func append(bool: Bool) throws(Errno) {
        var value: Int32 = bool ? 1 : 0
        try check(sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "b")), &value))
    }

    public func append(double: Double) throws(Errno) {
        var value = double
        try check(sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "d")), &value))
    }

    private func appendText(_ type: Unicode.Scalar, _ text: String) throws(Errno) {
        let result = text.withCString { sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: type)), $0) }
        try check(result)
    }

    /// Opens a container: `type` is "a", "v", "r" or "e", `contents` its signature.
    public func openContainer(_ type: Unicode.Scalar, _ contents: String) throws(Errno) {
        try check(sd_bus_message_open_container(pointer, CChar(UInt8(ascii: type)), contents))
    }

    public func closeContainer() throws(Errno) {
        try check(sd_bus_message_close_container(pointer))
    }

    private func check(_ result: Int32) throws(Errno) {
        if result < 0 { throw Errno(rawValue: -result) }
    }
}
