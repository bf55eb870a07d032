import AklocGeoClue
import AklocGeoService
import AklocMQTT
import AklocPlaces
import AklocTimeline
import AklocTrack

extension FeaturePlug {
    /// aklocd's features, each made from its config section, started in
    /// this order after the core (sessions, geo data, the client socket,
    /// the saved places, the gpsd source) and stopped in reverse. Adding a
    /// feature is its module and one line here (docs/architecture.md).
    static let all: [FeaturePlug] = [
        FeaturePlug(GeoFeature.self, section: "geo") { $0.geo },
        FeaturePlug(PlacesFeature.self, section: "places") { _ in PlacesSettings() },
        FeaturePlug(MQTTFeature.self, section: "mqtt") { $0.mqtt },
        FeaturePlug(TrackFeature.self, section: "track") { $0.track },
        FeaturePlug(TimelineFeature.self, section: "timeline") { $0.timeline },
        FeaturePlug(GeoClueFeature.self, section: "geoclue") { $0.geoclue },
        FeaturePlug(NMEAFeature.self, section: "geoclue") { $0.geoclue },
    ]
}
