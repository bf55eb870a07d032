import AklocCore
import AklocGeo
import AklocJSON

/// What a saved-place op answers (docs/places.md): `{"place":…}` for
/// `savePlace`, `{"places":[…]}` for `places`, `null` for `deletePlace`,
/// `{"places":[names]}` for `startMonitoring` and `stopMonitoring`.
public enum PlacesReply: Hashable, Sendable {
    case place(SavedPlace)
    case places([SavedPlace])
    case done
    case names([String])
}

extension ServerEncoder {
    /// The reply to a saved-place op.
    public static func reply(id: RequestID?, _ reply: PlacesReply) -> [UInt8] {
        self.reply(id: id) { writer in
            switch reply {
            case .place(let place):
                writer.raw("{\"place\":")
                place.write(to: &writer)
                writer.byte(UInt8(ascii: "}"))
            case .places(let places):
                writer.raw("{\"places\":[")
                for (index, place) in places.enumerated() {
                    if index > 0 { writer.byte(UInt8(ascii: ",")) }
                    place.write(to: &writer)
                }
                writer.raw("]}")
            case .done:
                writer.raw("null")
            case .names(let names):
                writer.raw("{\"places\":")
                writer.value(.array(names.map(JSONValue.string)))
                writer.byte(UInt8(ascii: "}"))
            }
        }
    }

    /// A region monitor's entry or exit, for the engine to deliver as
    /// `{"event":"didEnterRegion"|"didExitRegion","place":…,"location":…}`
    /// (`ServerEncoder.event`). `place` is the saved place the region was
    /// made from; without one (it was deleted in the same step) the place is
    /// `{"name":…}` alone.
    public static func regionCrossing(_ event: RegionMonitor.Event, place: SavedPlace?, location: Location)
        -> RegionCrossing
    {
        let (kind, region): (RegionCrossing.Kind, RegionMonitor.Region)
        switch event {
        case .didEnter(let entered, _): (kind, region) = (.enter, entered)
        case .didExit(let left, _): (kind, region) = (.exit, left)
        }
        var writer = JSONWriter(capacity: 256)
        if let place {
            place.write(to: &writer)
        } else {
            writer.raw("{\"name\":")
            writer.string(region.name)
            writer.byte(UInt8(ascii: "}"))
        }
        return RegionCrossing(kind: kind, place: writer.bytes, location: location)
    }
}
