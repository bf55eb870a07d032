import AklocGeoService
import Testing

@testable import AklocDaemon

@Suite struct ConfigParserGeoTests {
    @Test func dataDirectoryIsRead() throws {
        #expect(try ConfigParser.parse("", path: configPath).geo.dataDirectory == nil)
        #expect(
            try ConfigParser.parse("[geo]\ndata-dir = /srv/akloc\n", path: configPath).geo.dataDirectory == "/srv/akloc"
        )
        let quoted = try ConfigParser.parse("[geo]\ndata-dir = \"/srv/akloc data\"\n", path: configPath)
        #expect(quoted.geo.dataDirectory == "/srv/akloc data")
    }

    @Test(arguments: [
        ("[geo]\ndata-dir = share/akloc\n", ConfigError.Code.badValue, "data-dir"),
        ("[geo]\ndata-dir = /srv/akloc data\n", .badValue, "data-dir"),
        ("[geo]\ndata-dir =\n", .badValue, "data-dir"),
        ("[geo]\ndatadir = /srv\n", .unknownKey, "datadir"),
        ("[geo]\ndata-dir = /a\ndata-dir = /b\n", .duplicateKey, "data-dir"),
    ])
    func badValuesAreRefused(text: String, code: ConfigError.Code, key: String) throws {
        let error = try #require(configFailure(text), "\(text) was accepted")
        #expect(error.code == code && error.key == key && error.line != nil, "\(error)")
    }

    /// Unset, the data sits beside the prefix aklocd runs from, then where the package puts it.
    @Test func defaultDirectoriesFollowThePrefix() {
        var geo = GeoSettings()
        #expect(
            geo.dataDirectories(executable: "/usr/local/bin/aklocd") == ["/usr/local/share/akloc", "/usr/share/akloc"])
        #expect(
            geo.dataDirectories(executable: "/opt/akloc/sbin/aklocd") == ["/opt/akloc/share/akloc", "/usr/share/akloc"])
        #expect(geo.dataDirectories(executable: "/usr/bin/aklocd") == ["/usr/share/akloc"])
        #expect(geo.dataDirectories(executable: "/home/me/src/.build/debug/aklocd") == ["/usr/share/akloc"])
        #expect(geo.dataDirectories(executable: nil) == ["/usr/share/akloc"])
        geo.dataDirectory = "/srv/geo"
        #expect(geo.dataDirectories(executable: "/usr/local/bin/aklocd") == ["/srv/geo"])
    }
}
