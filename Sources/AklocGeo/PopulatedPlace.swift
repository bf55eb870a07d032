/// One GeoNames populated place, as the gazetteer file holds it.
public struct PopulatedPlace: Hashable, Sendable {
    /// The record's position in the file (k-d order): stable for one data file.
    public var index: Int
    public var name: String
    /// The name without diacritics, case kept ("Zurich" for "Zürich").
    public var asciiName: String
    public var coordinate: Coordinate
    /// ISO 3166-1 alpha-2, as GeoNames gives it.
    public var countryCode: String
    /// Admin-1 name (state, province), when GeoNames has it.
    public var administrativeArea: String?
    /// Admin-2 name (county, district), when GeoNames has it.
    public var subAdministrativeArea: String?
    public var population: Int
    /// IANA time-zone identifier of the place.
    public var timeZone: String?

    public init(
        index: Int, name: String, asciiName: String, coordinate: Coordinate, countryCode: String,
        administrativeArea: String?, subAdministrativeArea: String?, population: Int, timeZone: String?
    ) {
        self.index = index
        self.name = name
        self.asciiName = asciiName
        self.coordinate = coordinate
        self.countryCode = countryCode
        self.administrativeArea = administrativeArea
        self.subAdministrativeArea = subAdministrativeArea
        self.population = population
        self.timeZone = timeZone
    }
}
