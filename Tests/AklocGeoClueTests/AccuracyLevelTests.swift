import AklocCore
import Testing

@testable import AklocGeoClue

@Suite struct AccuracyLevelTests {
    private let fix = Location(
        latitude: 44.435248, longitude: -71.675795, altitude: 268, horizontalAccuracy: 4.3, speed: 2.7,
        course: 76.6, receivedAt: FixTime(secondsSince1970: 1_796_130_121, nanoseconds: 250_000_000))

    @Test func requestedValuesMapToGeoCluesLevels() {
        let expected: [(UInt32, AccuracyLevel)] = [
            (0, .none), (1, .country), (2, .country), (3, .country), (4, .city), (5, .neighborhood), (6, .street),
            (7, .street), (8, .exact), (9, .exact), (UInt32.max, .exact),
        ]
        for (value, level) in expected { #expect(AccuracyLevel(requested: value) == level, "\(value)") }
    }

    @Test func exactPassesTheFixThroughWithGeoCluesEncoding() throws {
        let shown = try #require(AccuracyLevel.exact.coarsen(fix))
        #expect(shown.latitude == fix.latitude && shown.longitude == fix.longitude)
        #expect(shown.accuracy == 4.3 && shown.altitude == 268 && shown.speed == 2.7 && shown.heading == 76.6)
        #expect(shown.timestamp.seconds == 1_796_130_121 && shown.timestamp.microseconds == 250_000)
    }

    @Test func unknownsAreEncodedAsGeoClueDoes() throws {
        let bare = Location(latitude: 1, longitude: 2, mode: .twoD)
        let shown = try #require(AccuracyLevel.exact.coarsen(bare))
        #expect(shown.altitude == -1.7976931348623157e+308)
        #expect(shown.speed == -1 && shown.heading == -1 && shown.accuracy == -1)
        #expect(shown.timestamp.seconds == 0)
    }

    @Test func noneShowsNothing() {
        #expect(AccuracyLevel.none.coarsen(fix) == nil)
    }

    /// Each coarse level: the cell's centre, at least the level's accuracy,
    /// nothing about height or motion, and within the cell of the truth.
    @Test(arguments: [
        (AccuracyLevel.country, 1.0, 300_000.0), (.city, 0.1, 15_000), (.neighborhood, 0.02, 3_000),
        (.street, 0.005, 1_000),
    ])
    func coarseLevelsSnapToTheirGrid(level: AccuracyLevel, cell: Double, accuracy: Double) throws {
        let shown = try #require(level.coarsen(fix))
        #expect(abs(shown.latitude - fix.latitude) <= cell / 2 + 1e-12)
        #expect(abs(shown.longitude - fix.longitude) <= cell / 2 + 1e-12)
        let latitudeCells = (shown.latitude / cell - 0.5).rounded()
        #expect(abs(shown.latitude / cell - 0.5 - latitudeCells) < 1e-9, "latitude is a cell centre")
        let longitudeCells = (shown.longitude / cell - 0.5).rounded()
        #expect(abs(shown.longitude / cell - 0.5 - longitudeCells) < 1e-9, "longitude is a cell centre")
        #expect(shown.accuracy == accuracy)
        #expect(shown.altitude == GeoClueLocation.unknownAltitude)
        #expect(shown.speed == -1 && shown.heading == -1)
        // Moving inside the cell changes nothing a client sees.
        var moved = fix
        moved.latitude = (fix.latitude / cell).rounded(.down) * cell + cell * 0.01
        moved.longitude = (fix.longitude / cell).rounded(.down) * cell + cell * 0.99
        let movedShown = try #require(level.coarsen(moved))
        #expect(movedShown.latitude == shown.latitude && movedShown.longitude == shown.longitude)
    }

    @Test func aPoorFixKeepsItsOwnWorseAccuracy() throws {
        var poor = fix
        poor.horizontalAccuracy = 5_000
        #expect(try #require(AccuracyLevel.street.coarsen(poor)).accuracy == 5_000)
        #expect(try #require(AccuracyLevel.city.coarsen(poor)).accuracy == 15_000)
    }

    @Test func cellsStayOnTheGlobe() throws {
        let pole = Location(latitude: 90, longitude: 180)
        let shown = try #require(AccuracyLevel.country.coarsen(pole))
        #expect(shown.latitude == 89.5 && shown.longitude == 179.5)
        let south = try #require(AccuracyLevel.country.coarsen(Location(latitude: -90, longitude: -180)))
        #expect(south.latitude == -89.5 && south.longitude == -179.5)
    }
}
