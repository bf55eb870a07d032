import AklocGeo
import AklocJSON
import Testing

@testable import akloc

/// Which locations, track points and places the map draws: only those with
/// a position on the globe reach the page (Leaflet throws on the others).
/// The layers themselves are tested in Chromium (Tests/Browser/test_map.py).
struct MapDataTests {
    @Test func aPositionOnTheGlobeIsDrawn() {
        let location: JSONValue = ["latitude": 44.4352, "longitude": -71.676, "speed": 2.7]
        let coordinate = MapData.coordinate(of: location)
        #expect(coordinate?.latitude == 44.4352)
        #expect(coordinate?.longitude == -71.676)
        // Whole degrees come as JSON integers; the edges of the globe are on it.
        #expect(MapData.coordinate(of: ["latitude": 0, "longitude": 0]) != nil)
        #expect(MapData.coordinate(of: ["latitude": -90, "longitude": 180]) != nil)
        #expect(MapData.coordinate(of: ["latitude": 90.0, "longitude": -180.0]) != nil)
    }

    @Test func oneWithoutAPositionIsLeftOut() {
        let values: [JSONValue?] = [
            nil, .null, [:], ["timestamp": 1_158_435_661, "speed": 2.7], ["latitude": 44.4], ["longitude": -71.6],
            ["latitude": .null, "longitude": .null], ["latitude": "44.4", "longitude": "-71.6"],
            ["latitude": true, "longitude": false], ["latitude": [44.4], "longitude": [-71.6]],
            ["latitude": 90.0001, "longitude": 0], ["latitude": 0, "longitude": -180.5],
            ["latitude": .double(.nan), "longitude": 0], ["latitude": 0, "longitude": .double(.infinity)],
            [44.4, -71.6], "44.4,-71.6",
        ]
        for value in values {
            #expect(MapData.coordinate(of: value) == nil, "\(String(describing: value))")
        }
    }
}
