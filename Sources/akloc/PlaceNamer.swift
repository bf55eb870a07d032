import AklocCore
import AklocJSON
import AklocProtocol

/// The place note of `watch --human` ("near Enkhuizen"): a reverseGeocode
/// of the line's location, reused while the fix stays within 200 m of the
/// last one asked about. Without geo data in the daemon it asks once and
/// then stays quiet.
struct PlaceNamer {
    static let reuseDistance = 200.0

    private var last: (latitude: Double, longitude: Double, note: String?)?
    private var disabled = false

    /// The note for a position; events read while waiting for the answer go
    /// to `backlog`, in order.
    mutating func note(
        latitude: Double, longitude: Double, _ connection: DaemonConnection,
        _ backlog: inout [DaemonConnection.Event]
    ) -> String? {
        guard !disabled else { return nil }
        if let last,
            Location.distance(
                latitude: last.latitude, longitude: last.longitude, toLatitude: latitude, longitude: longitude)
                < Self.reuseDistance
        {
            return last.note
        }
        // A daemon that cannot answer (gone, no geo data) only costs the note:
        // the watch goes on and reports a closed connection itself.
        do throws(CLIError) {
            let id = try connection.send(
                .geo(.reverseGeocode(coordinate: GeoPoint(latitude: latitude, longitude: longitude))))
            while let (line, message) = try connection.nextMessage() {
                switch message {
                case .reply(let replyID, let result) where replyID == id:
                    guard case .success(let value) = result else { break }
                    let note = value["placemark"]?["locality"]?.stringValue.map { "near \($0)" }
                    last = (latitude, longitude, note)
                    return note
                case .reply, .hello:
                    continue
                default:
                    backlog.append((line, message))
                    continue
                }
                break
            }
        } catch {}
        disabled = true
        return nil
    }
}
