import AklocCore
import AklocGeo
import AklocMQTT

/// The saved places on MQTT (DESIGN §8): the shared places (the machine's,
/// never a user's private ones) go out as OwnTracks `waypoints`, and the
/// forwarder's own region monitor over them publishes each entry and exit
/// as a `transition` on `<topic>/event`, as a phone's geofences do.
extension Daemon {
    /// After the forwarder started: its monitor, and the list once.
    func startForwarderPlaces() {
        guard forwarder != nil else { return }
        var watch = PlacesService.Watch(uid: PlacesService.forwarderUID, names: nil)
        places.resolve(&watch)
        places.forwarderWatch = watch
        publishWaypoints()
    }

    func publishWaypoints() {
        guard let forwarder else { return }
        forwarder.publishWaypoints(places.places.shared.map(Self.waypoint))
    }

    static func waypoint(_ place: SavedPlace) -> OwnTracksPayload.Waypoint {
        OwnTracksPayload.Waypoint(
            name: place.name, latitude: place.coordinate.latitude, longitude: place.coordinate.longitude,
            radius: place.radius, createdAt: place.createdAt)
    }

    func feedForwarderRegions(location: Coordinate, fix: Location, now: Instant) {
        guard let forwarder, let forwarderID, places.forwarderWatch != nil, engine.mayReceiveLocations(forwarderID)
        else { return }
        let events = places.forwarderWatch!.monitor.update(
            location: location, accuracy: fix.horizontalAccuracy, now: now)
        for event in events {
            let (kind, region): (OwnTracksPayload.TransitionEvent, RegionMonitor.Region)
            switch event {
            case .didEnter(let entered, _): (kind, region) = (.enter, entered)
            case .didExit(let left, _): (kind, region) = (.leave, left)
            }
            guard let place = places.forwarderWatch!.placesByName[region.name] else { continue }
            forwarder.publishTransition(kind, waypoint: Self.waypoint(place), location: fix)
        }
    }
}
