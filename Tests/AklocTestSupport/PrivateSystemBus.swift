import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private D-Bus system bus for a test: `dbus-daemon` with a
/// `<type>system</type>` config, an allow-all policy and its socket in a
/// temporary folder. Programs find it through `DBUS_SYSTEM_BUS_ADDRESS`
/// (`environment`). Stopped by PID and the folder removed by `stop()`.
public final class PrivateSystemBus: @unchecked Sendable {
    // @unchecked: immutable but for the TestProcess, which is thread-safe.
    public let directory: URL
    public let address: String
    public let process: TestProcess

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public static let tools = ["dbus-daemon", "gdbus", "busctl"]
    public static var missing: [String] { tools.filter { TestProcess.which($0) == nil } }

    public init(timeout: Double = 10) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Clients running as other users (setpriv) must reach the socket.
        chmod(directory.path, 0o755)
        let socket = directory.appendingPathComponent("system_bus_socket").path
        address = "unix:path=\(socket)"
        let config = directory.appendingPathComponent("system.conf").path
        try Self.config(listen: address).write(toFile: config, atomically: true, encoding: .utf8)
        process = try TestProcess("dbus-daemon", ["--config-file=\(config)", "--nofork", "--nopidfile"])
        let deadline = Date().addingTimeInterval(timeout)
        while access(socket, F_OK) != 0 {
            guard process.isRunning, Date() < deadline else {
                let stderr = process.stderr()
                stop()
                throw StartError(description: "dbus-daemon did not listen on \(socket): \(stderr)")
            }
            usleep(10_000)
        }
    }

    deinit { stop() }

    /// What a program needs to use this bus as its system bus.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    static func config(listen: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>\(listen)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
          </policy>
        </busconfig>
        """
    }
}
