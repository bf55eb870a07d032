import AklocTimeline
import Testing

@testable import AklocDaemon

@Suite struct ConfigParserTimelineTests {
    @Test func radiusAndMinimumTimeAreRead() throws {
        #expect(try ConfigParser.parse("", path: configPath).timeline == TimelineSettings())
        let read = try ConfigParser.parse("[timeline]\nradius = 150.5\nmin-time = 600\n", path: configPath)
        #expect(read.timeline == TimelineSettings(radius: 150.5, minimumTime: 600))
    }

    @Test(arguments: [
        ("[timeline]\nradius = 0\n", ConfigError.Code.badValue, "radius"),
        ("[timeline]\nradius = 1000000000\n", .badValue, "radius"),
        ("[timeline]\nradius = -5\n", .badValue, "radius"),
        ("[timeline]\nradius = nan\n", .badValue, "radius"),
        ("[timeline]\nradius = 1e3\n", .badValue, "radius"),
        ("[timeline]\nmin-time = 0\n", .badValue, "min-time"),
        ("[timeline]\nmin-time = 1000000\n", .badValue, "min-time"),
        ("[timeline]\nmin-time = 5min\n", .badValue, "min-time"),
        ("[timeline]\nmintime = 5\n", .unknownKey, "mintime"),
        ("[timeline]\nradius = 50\nradius = 60\n", .duplicateKey, "radius"),
    ])
    func badValuesAreRefusedNamingTheKey(text: String, code: ConfigError.Code, key: String) throws {
        let error = try #require(configFailure(text), "\(text) was accepted")
        #expect(error.code == code && error.key == key && error.line != nil, "\(error)")
        #expect("\(error)".contains("[timeline] \(key)"), "\(error)")
    }
}
