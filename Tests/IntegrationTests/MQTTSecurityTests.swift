import AklocTestSupport
import Foundation
import Testing

/// TLS and password authentication against mosquitto configured for them
/// (issue 8), with a CA and server certificate made in the test.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTSecurityTests {
    /// A throwaway CA, a server certificate for 127.0.0.1 signed by it, and a
    /// mosquitto password file with one user.
    final class Credentials {
        let directory: URL
        var caFile: String { path("ca.pem") }
        var certFile: String { path("server.pem") }
        var keyFile: String { path("server.key") }
        var passwordFile: String { path("passwords") }
        let user = "van7"
        let password = "s3cret words"

        init() throws {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("akloc-mqtt-tls-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try run(
                "openssl",
                ["req", "-x509"] + ec + [
                    "-keyout", path("ca.key"), "-out", caFile, "-days", "2",
                    "-subj", "/CN=akloc test CA",
                ])
            try run(
                "openssl", ["req"] + ec + ["-keyout", keyFile, "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
            try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
                toFile: path("san.ext"), atomically: true, encoding: .utf8)
            try run(
                "openssl",
                [
                    "x509", "-req", "-in", path("server.csr"), "-CA", caFile, "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-out", certFile, "-days", "2", "-extfile", path("san.ext"),
                ])
            try run("mosquitto_passwd", ["-b", "-c", passwordFile, user, password])
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        private func run(_ tool: String, _ arguments: [String]) throws {
            let process = try TestProcess(tool, arguments)
            let code = process.waitForExit(timeout: 30)
            guard code == 0 else {
                throw SocketClient.Failure("\(tool) \(arguments.joined(separator: " ")) failed: \(process.stderr())")
            }
        }

        /// mosquitto_sub/pub options for this broker.
        var clientArguments: [String] { ["--cafile", caFile, "-u", user, "-P", password] }
    }

    @Test func tlsWithPasswordDeliversAndBadCredentialsAreRefused() throws {
        guard LiveReplay.requireTools() else { return }
        let credentials = try Credentials()
        let broker = try MosquittoBroker(
            options: .init(
                tls: (credentials.certFile, credentials.keyFile), passwordFile: credentials.passwordFile))
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port, extraArguments: credentials.clientArguments)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port, publishArguments: credentials.clientArguments)

        // The password in a file (password-file), as docs/mqtt.md recommends.
        let passwordPath = credentials.path("akloc-password")
        try "\(credentials.password)\n".write(toFile: passwordPath, atomically: true, encoding: .utf8)
        let secure = """
            tls = yes
            cafile = \(credentials.caFile)
            username = \(credentials.user)
            password-file = \(passwordPath)
            """
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil,
            config: MQTTTest.config(port: broker.port, tid: "ca", extra: secure))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "the queue to drain over TLS") {
            $0["queued"] as? Int == 0 && ($0["published"] as? Int ?? 0) > 0
        }
        #expect(mqtt["broker"] as? String == "mqtts://127.0.0.1:\(broker.port)")
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        let messages = try subscriber.waitFor(timeout: 20, "every fix over TLS") {
            MQTTTest.locations($0, topic: "owntracks/tester/car").count >= accepted.count
        }
        #expect(MQTTTest.locations(messages, topic: "owntracks/tester/car") == accepted)
        #expect(accepted.count > 50)

        // A wrong password: the broker refuses the CONNECT, status says why.
        let idleGPSD = FreePort.loopbackTCP()
        let wrongPassword = try DaemonProcess(
            gpsdPort: idleGPSD,
            config: MQTTTest.config(
                port: broker.port, tid: "wp", device: "wrong",
                extra: "tls = yes\ncafile = \(credentials.caFile)\nusername = \(credentials.user)\npassword = nope\n"))
        defer { wrongPassword.stop() }
        let refused = try MQTTTest.waitForStatus(wrongPassword, timeout: 20, "a refused connection") {
            ($0["lastError"] as? String)?.contains("connectionRefused") == true
        }
        #expect(refused["connected"] as? Bool == false)

        // No CA configured: the system trust store does not know the test CA.
        let untrusted = try DaemonProcess(
            gpsdPort: idleGPSD,
            config: MQTTTest.config(
                port: broker.port, tid: "nc", device: "noca",
                extra: "tls = yes\nusername = \(credentials.user)\npassword = \"\(credentials.password)\"\n"))
        defer { untrusted.stop() }
        let failed = try MQTTTest.waitForStatus(untrusted, timeout: 20, "a failed TLS handshake") {
            ($0["lastError"] as? String)?.contains("TLS error") == true
        }
        #expect(failed["connected"] as? Bool == false)
        print("MQTT security: wrong password -> \(refused["lastError"] ?? ""); no CA -> \(failed["lastError"] ?? "")")
        #expect(!MQTTTest.locations(subscriber.messages(), topic: "owntracks/tester/noca").contains { _ in true })
    }
}
