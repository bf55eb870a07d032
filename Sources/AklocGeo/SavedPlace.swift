import AklocCore

/// A place a subscriber saved (DESIGN §9), for listing and region monitoring.
/// Built only through the validating initialiser, so every value is one the
/// store may write and the monitor may use.
public struct SavedPlace: Hashable, Sendable {
    public static let maxNameLength = 64
    public static let maxNoteLength = 1024
    public static let defaultRadius = 100.0
    public static let radiusRange: ClosedRange<Double> = 1...100_000
    /// Per owner; the store enforces it.
    public static let maxPerOwner = 1000

    /// 1–64 characters, no control characters; unique per owner.
    public private(set) var name: String
    public private(set) var coordinate: Coordinate
    /// Metres, 1 m to 100 km.
    public private(set) var radius: Double
    /// The uid that saved it.
    public var owner: UInt32
    public var createdAt: FixTime
    public private(set) var note: String?
    /// An admin's place that every subscriber sees.
    public var shared: Bool

    public init(
        name: String, coordinate: Coordinate, radius: Double = SavedPlace.defaultRadius, owner: UInt32,
        createdAt: FixTime, note: String? = nil, shared: Bool = false
    ) throws(GeoQueryError) {
        try Self.checkName(name)
        _ = try GeoQueryError.checked(coordinate, field: "coordinate")
        try Self.checkRadius(radius)
        if let note { try Self.checkNote(note) }
        self.name = name
        self.coordinate = coordinate
        self.radius = radius
        self.owner = owner
        self.createdAt = createdAt
        self.note = note
        self.shared = shared
    }

    /// 1–64 characters, not all spaces, no control characters. The rules
    /// of a place's own values are public so a request can be refused for
    /// them before anything else is looked at (docs/protocol.md).
    public static func checkName(_ name: String, field: String = "name") throws(GeoQueryError) {
        try check(text: name, field: field, limit: maxNameLength)
        guard name.contains(where: { !$0.isWhitespace }) else {
            throw GeoQueryError(.emptyName, field: field, "\(field) must have a character other than spaces")
        }
    }

    /// 1 m to 100 km.
    public static func checkRadius(_ radius: Double) throws(GeoQueryError) {
        guard radius.isFinite, radiusRange.contains(radius) else {
            throw GeoQueryError(.badRadius, field: "radius", "radius must be 1 to 100000 m")
        }
    }

    /// At most 1024 characters, no control characters; may be empty.
    public static func checkNote(_ note: String) throws(GeoQueryError) {
        try check(text: note, field: "note", limit: maxNoteLength, allowEmpty: true)
    }

    private static func check(
        text: String, field: String, limit: Int, allowEmpty: Bool = false
    ) throws(GeoQueryError) {
        if text.isEmpty, !allowEmpty {
            throw GeoQueryError(.emptyName, field: field, "\(field) must not be empty")
        }
        // Counted in Unicode scalars, so a limit holds however a client
        // clusters characters, and a stored name never grows.
        guard text.unicodeScalars.count <= limit else {
            throw GeoQueryError(
                allowEmpty ? .noteTooLong : .nameTooLong, field: field,
                "\(field) is longer than \(limit) characters")
        }
        if let bad = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw GeoQueryError(
                .controlCharacter, field: field,
                "\(field) has the control character U+\(String(bad.value, radix: 16, uppercase: true))")
        }
    }
}
