import AklocCore
import AklocGeo
import AklocJSON

/// The one JSON form of a saved place, on the wire (`savePlace`, `places`,
/// region events) and in the store's files:
/// `{"name","coordinate":{"latitude","longitude"},"radius","owner","createdAt","shared"[,"note"]}`.
extension SavedPlace {
    /// Writes the place, members in sorted order, with the wire protocol's
    /// number and string formatting: no dictionary is built, so a file of a
    /// thousand places is written in well under a millisecond.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"coordinate\":{\"latitude\":")
        writer.number(coordinate.latitude)
        writer.raw(",\"longitude\":")
        writer.number(coordinate.longitude)
        writer.raw("},\"createdAt\":")
        writer.string(createdAt.iso8601)
        writer.raw(",\"name\":")
        writer.string(name)
        if let note {
            writer.raw(",\"note\":")
            writer.string(note)
        }
        writer.raw(",\"owner\":")
        writer.integer(Int64(owner))
        writer.raw(",\"radius\":")
        writer.number(radius)
        writer.raw(",\"shared\":")
        writer.bool(shared)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Reads the form `write(to:)` writes, with every rule of the initialiser; a
    /// member missing or of the wrong type is an error naming it.
    public init(json: JSONValue) throws(GeoQueryError) {
        guard case .object(let members) = json else {
            throw GeoQueryError(.badCoordinate, field: "place", "a place must be an object")
        }
        func number(_ value: JSONValue?, _ field: String) throws(GeoQueryError) -> Double {
            guard let number = value?.doubleValue else {
                throw GeoQueryError(.badCoordinate, field: field, "\(field) must be a number")
            }
            return number
        }
        guard let name = members["name"]?.stringValue else {
            throw GeoQueryError(.emptyName, field: "name", "name must be a string")
        }
        guard let coordinate = members["coordinate"]?.objectValue else {
            throw GeoQueryError(.badCoordinate, field: "coordinate", "coordinate must be an object")
        }
        let latitude = try number(coordinate["latitude"], "coordinate.latitude")
        let longitude = try number(coordinate["longitude"], "coordinate.longitude")
        let radius = try number(members["radius"], "radius")
        guard case .int(let owner)? = members["owner"], let uid = UInt32(exactly: owner) else {
            throw GeoQueryError(.badCoordinate, field: "owner", "owner must be a uid")
        }
        guard let created = members["createdAt"]?.stringValue.flatMap(FixTime.init(iso8601:)) else {
            throw GeoQueryError(.badCoordinate, field: "createdAt", "createdAt must be an ISO 8601 time")
        }
        var note: String?
        if let value = members["note"], value != .null {
            guard let text = value.stringValue else {
                throw GeoQueryError(.noteTooLong, field: "note", "note must be a string")
            }
            note = text
        }
        try self.init(
            name: name, coordinate: Coordinate(latitude: latitude, longitude: longitude), radius: radius, owner: uid,
            createdAt: created, note: note, shared: members["shared"]?.boolValue ?? false)
    }
}
