import AklocCore
import AklocTestSupport
import Dispatch
import Glibc
import Testing

@testable import AklocSystemd

@Suite struct LoggerTests {
    private func capture(_ level: Logger.Level = .debug, _ body: (Logger) -> Void) -> String {
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        body(Logger(minimumLevel: level, destination: .stream(writeEnd)))
        return TestSockets.drain(readEnd)
    }

    @Test func linesHaveLevelPrefixAndFields() {
        let output = capture { logger in
            logger.info("client connected", ["AKLOC_CLIENT_UID": "1000", "AKLOC_SOURCE": "gpsd://127.0.0.1:2947"])
            logger.warning("gpsd connection lost")
            logger.log(.notice, "reloaded", fields: [("AKLOC_CONFIG", "/etc/akloc/akloc.conf")])
            logger.debug("tick")
            logger.error("cannot write state", ["errno": "ENOSPC"])
        }
        #expect(
            output == """
                info: client connected client_uid=1000 source=gpsd://127.0.0.1:2947
                warning: gpsd connection lost
                notice: reloaded config=/etc/akloc/akloc.conf
                debug: tick
                error: cannot write state errno=ENOSPC

                """)
    }

    @Test func levelFilter() {
        let output = capture(.warning) { logger in
            logger.debug("no")
            logger.info("no")
            logger.notice("no")
            logger.warning("yes")
            logger.error("yes")
        }
        #expect(output == "warning: yes\nerror: yes\n")
    }

    @Test func disabledMessagesAreNotBuilt() {
        nonisolated(unsafe) var built = false
        func expensive() -> String {
            built = true
            return "x"
        }
        _ = capture(.info) { $0.debug(expensive()) }
        #expect(!built)
    }

    @Test func eachRecordStaysOnOneLine() {
        let output = capture { logger in
            logger.info(
                "line one\nline two\tand \u{1B}[31m", ["AKLOC_NOTE": "has spaces \"and quotes\"", "AKLOC_EMPTY": ""])
        }
        #expect(
            output == "info: line one\\nline two\\tand \\x1b[31m note=\"has spaces \\\"and quotes\\\"\" empty=\"\"\n")
    }

    @Test func levelNames() {
        #expect(Logger.Level(name: "debug") == .debug)
        #expect(Logger.Level(name: "INFO") == .info)
        #expect(Logger.Level(name: "notice") == .notice)
        #expect(Logger.Level(name: "warn") == .warning)
        #expect(Logger.Level(name: "warning") == .warning)
        #expect(Logger.Level(name: "err") == .error)
        #expect(Logger.Level(name: "loud") == nil)
        #expect(Logger.Level.allCases.map(\.syslogPriority) == [7, 6, 5, 4, 3])
        #expect(Logger.Level.debug < .error)
    }

    @Test func concurrentRecordsDoNotInterleave() {
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let logger = Logger(minimumLevel: .debug, destination: .stream(writeEnd))
        let payload = String(repeating: "x", count: 100)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<40 {
                logger.info("worker \(worker) record \(index) \(payload)", ["AKLOC_WORKER": "\(worker)"])
            }
        }
        let lines = TestSockets.drain(readEnd).split(separator: "\n")
        #expect(lines.count == 320)
        #expect(
            lines.allSatisfy {
                $0.hasPrefix("info: worker ") && $0.hasSuffix("\(payload) worker=\($0.split(separator: " ")[2])")
            })
    }

    @Test func journalStreamMustNameTheDescriptor() {
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        var info = stat()
        fstat(writeEnd, &info)
        let matching = "\(info.st_dev):\(info.st_ino)"
        #expect(Logger.journalStreamMatches(matching, fd: writeEnd))
        #expect(!Logger.journalStreamMatches("\(info.st_dev):\(info.st_ino + 1)", fd: writeEnd))
        #expect(!Logger.journalStreamMatches(nil, fd: writeEnd))
        #expect(!Logger.journalStreamMatches("garbage", fd: writeEnd))
        #expect(!Logger.journalStreamMatches("1:2:3", fd: writeEnd))
        #expect(!Logger.journalStreamMatches(matching, fd: -1))
    }

    @Test func journalFieldNames() {
        #expect(Logger.journalFieldName("AKLOC_CLIENT_UID") == "AKLOC_CLIENT_UID")
        #expect(Logger.journalFieldName("akloc-client.uid") == "AKLOC_CLIENT_UID")
        #expect(Logger.journalFieldName("_PID") == nil, "trusted fields cannot be forged")
        #expect(Logger.journalFieldName("1X") == nil)
        #expect(Logger.journalFieldName("PRIORITY") == nil)
        #expect(Logger.journalFieldName(String(repeating: "A", count: 80))?.count == 64)
    }

    @Test func journalNeedsAMatchingStreamAndJournaldSocket() {
        let (readEnd, writeEnd) = TestSockets.pipe()
        let directory = TestSockets.temporaryDirectory()
        let socketPath = directory + "/socket"
        let journald = TestSockets.unixSocket(type: Int32(SOCK_DGRAM.rawValue), path: socketPath)
        defer {
            close(readEnd)
            close(writeEnd)
            close(journald)
            unlink(socketPath)
            rmdir(directory)
        }
        var info = stat()
        fstat(writeEnd, &info)
        let stream = "\(info.st_dev):\(info.st_ino)"
        #expect(
            Logger.destination(journalStream: stream, fd: writeEnd, journalSocket: socketPath)
                == .journal(fallback: writeEnd))
        #expect(
            Logger.destination(journalStream: stream, fd: writeEnd, journalSocket: directory + "/none")
                == .stream(writeEnd))
        #expect(Logger.destination(journalStream: nil, fd: writeEnd, journalSocket: socketPath) == .stream(writeEnd))
    }
}
