import AklocTestSupport
import Foundation
import Testing

@testable import AklocGeoClue

/// The interfaces as served, member for member against Debian
/// `geoclue-2.0`'s XML (the package is in the Makefile's DEB_PACKAGES).
@Suite struct GeoClueInterfacesTests {
    static let directory = "/usr/share/dbus-1/interfaces"

    private func debian(_ interface: String) throws -> String? {
        let path = "\(Self.directory)/\(interface).xml"
        guard FileManager.default.fileExists(atPath: path) else {
            if ProcessInfo.processInfo.environment["AKLOC_REQUIRE_TOOLS"] == "1" {
                Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(path) is missing (Debian geoclue-2.0)")
            }
            return nil
        }
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test(arguments: [GeoClueInterfaces.manager, GeoClueInterfaces.client, GeoClueInterfaces.location])
    func introspectionMatchesGeoCluesXML(interface: GeoClueInterfaces.Interface) throws {
        guard let reference = try debian(interface.name) else { return }
        let expected = IntrospectionXML.describe(reference, interfacesWithPrefix: "org.freedesktop.GeoClue2")
        #expect(expected.count > 3, "the reference parsed: \(expected)")
        let served = GeoClueInterfaces.introspection(interfaces: [interface], children: ["7"])
        #expect(IntrospectionXML.describe(served, interfacesWithPrefix: "org.freedesktop.GeoClue2") == expected)
        #expect(IntrospectionXML.children(served) == ["7"])
    }

    @Test func theStandardInterfacesAreDeclaredToo() {
        let served = GeoClueInterfaces.introspection(interfaces: [GeoClueInterfaces.manager], children: [])
        let standard = IntrospectionXML.describe(served, interfacesWithPrefix: "org.freedesktop.DBus.")
        #expect(
            standard.filter { $0.hasPrefix("interface") } == [
                "interface org.freedesktop.DBus.Peer", "interface org.freedesktop.DBus.Introspectable",
                "interface org.freedesktop.DBus.Properties",
            ])
        #expect(standard.contains("signal PropertiesChanged"))
    }
}
