import AklocCore
import AklocGPSD
import Testing

@Suite struct EventMappingTests {
    @Test func eventsMapOntoEngineInputs() {
        let location = Location(latitude: 1, longitude: 2, device: "/dev/a")
        guard case .sourceConnected(let name) = GPSDSource.Event.connected(name: "gpsd://x:1").engineInput else {
            Issue.record("connected")
            return
        }
        #expect(name == "gpsd://x:1")
        guard case .sourceDisconnected = GPSDSource.Event.disconnected(reason: "gone").engineInput else {
            Issue.record("disconnected")
            return
        }
        guard case .fix(let mapped) = GPSDSource.Event.fix(location).engineInput else {
            Issue.record("fix")
            return
        }
        #expect(mapped == location)
        guard case .noFix(let device) = GPSDSource.Event.noFix(device: "/dev/a").engineInput else {
            Issue.record("noFix")
            return
        }
        #expect(device == "/dev/a")
    }
}
