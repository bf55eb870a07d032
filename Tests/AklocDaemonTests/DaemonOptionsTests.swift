import Testing

@testable import AklocDaemon

@Suite struct DaemonOptionsTests {
    @Test func parsesEveryOption() throws {
        let options = try DaemonOptions.parse([
            "--socket", "/tmp/s", "--gpsd=127.0.0.1:1234", "--config", "/tmp/c", "--state-dir", "/tmp/st",
            "--log-level", "debug", "--check-config",
        ])
        #expect(options.socketPath == "/tmp/s")
        #expect(options.gpsd == "127.0.0.1:1234")
        #expect(options.configPath == "/tmp/c" && options.stateDirectory == "/tmp/st")
        #expect(options.logLevel == "debug" && options.checkConfig)
    }

    @Test func environmentSocketYieldsToTheFlag() throws {
        #expect(try DaemonOptions.parse([], environment: ["AKLOC_SOCKET": "/e"]).socketPath == "/e")
        #expect(try DaemonOptions.parse(["--socket", "/f"], environment: ["AKLOC_SOCKET": "/e"]).socketPath == "/f")
    }

    @Test(arguments: [["--socket"], ["--bogus"], ["--gpsd", "--socket", "/x"], ["extra"]])
    func rejectsBadArguments(arguments: [String]) {
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(arguments) }
    }
}
