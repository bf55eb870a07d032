import AklocPosix
import Testing

struct TCPListenerTests {
    @Test func listenAddressesParse() {
        #expect(TCPListener.Address(parsing: "127.0.0.1:8947") == .init(host: "127.0.0.1", port: 8947))
        #expect(TCPListener.Address(parsing: ":8947") == .init(host: "127.0.0.1", port: 8947))
        #expect(TCPListener.Address(parsing: "[::1]:80") == .init(host: "::1", port: 80))
        #expect(TCPListener.Address(parsing: "0.0.0.0:0")?.isLoopback == false)
        #expect(TCPListener.Address(parsing: "127.0.0.2:1")?.isLoopback == true)
        #expect(TCPListener.Address(parsing: "[::1]:80")?.description == "[::1]:80")
        for bad in ["", "8947", "localhost:8947", "127.0.0.1:70000", "127.0.0.1:", "::1:80", "[::1]80", "1.2.3:4"] {
            #expect(TCPListener.Address(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func listensOnAFreePortAndAcceptsWithoutBlocking() throws {
        let listener = try TCPListener.listen(on: .init(host: "127.0.0.1", port: 0))
        let port = try listener.boundPort()
        #expect(port != 0)
        #expect(try listener.accept() == nil, "nothing pending")
        // The same port again is refused while the first listens.
        #expect(throws: Errno.self) { try TCPListener.listen(on: .init(host: "127.0.0.1", port: port)) }
    }
}
