import AklocCore
import Testing

@Suite struct KeyPathTests {
    @Test func parsesEveryRootAndLocationMember() throws {
        for root in KeyPath.Root.allCases {
            #expect(try KeyPath(parsing: root.rawValue) == KeyPath(root))
        }
        for root in [KeyPath.Root.myLocation, .rawLocation] {
            for member in KeyPath.Member.allCases {
                let text = "\(root.rawValue).\(member.rawValue)"
                let parsed = try KeyPath(parsing: text)
                #expect(parsed == KeyPath(root, member: member))
                #expect(parsed.description == text)
            }
        }
    }

    @Test(arguments: [
        "", ".", "garbage", "mylocation", "myLocation.", ".speed", "myLocation.spee", "myLocation.speed.x",
        "myLocation..speed", "state.speed", "source.name", "authorizationStatus.x", "myLocation speed",
        " myLocation", "rawLocation.coordinate.latitude", "myLocation.Speed", "my\u{0}Location",
    ])
    func rejectsMalformedPaths(text: String) {
        #expect {
            try KeyPath(parsing: text)
        } throws: { error in
            guard let error = error as? KeyPathError else { return false }
            return error.code == .unknownKeyPath && !error.message.isEmpty
        }
    }

    @Test func rejectsOversizeInputWithoutEchoingIt() {
        let huge = "myLocation." + String(repeating: "speed", count: 100_000)
        do {
            _ = try KeyPath(parsing: huge)
            Issue.record("accepted oversize input")
        } catch {
            #expect(error.code == .unknownKeyPath)
            #expect(error.message.count < 200)
        }
    }

    @Test func errorsNameWhatIsWrong() {
        func message(_ text: String) -> String {
            do {
                _ = try KeyPath(parsing: text)
                return ""
            } catch { return error.message }
        }
        #expect(message("garbage").contains("myLocation"))
        #expect(message("myLocation.spee").contains("spee"))
        #expect(message("state.x").contains("no members"))
        #expect(message("myLocation.speed.x").contains("too many"))
        #expect(message("").contains("empty"))
        #expect(EngineError(KeyPathError("x")).code == .unknownKeyPath)
    }

    @Test func looksUpMembers() {
        let location = Location(
            latitude: 52.5, longitude: 5.25, mode: .twoD, altitude: 3, speed: 2.5,
            timestamp: FixTime(secondsSince1970: 1_000), device: "/dev/gps0")
        #expect(location.value(of: .coordinate) == .coordinate(latitude: 52.5, longitude: 5.25))
        #expect(location.value(of: .latitude) == .number(52.5))
        #expect(location.value(of: .speed) == .number(2.5))
        #expect(location.value(of: .altitude) == .number(3))
        #expect(location.value(of: .climb) == .null)
        #expect(location.value(of: .mode) == .string("2d"))
        #expect(location.value(of: .timestamp) == .time(FixTime(secondsSince1970: 1_000)))
        #expect(location.value(of: .receivedAt) == .null)
        #expect(location.value(of: .device) == .string("/dev/gps0"))
        #expect(KeyPath(.myLocation).value(in: location) == .location(location))
        #expect(KeyPath(.rawLocation, member: .speed).value(in: location) == .number(2.5))
        #expect(KeyPath(.myLocation, member: .speed).value(in: nil) == .null)
        #expect(KeyPath(.state).value(in: location) == .null)
    }
}
