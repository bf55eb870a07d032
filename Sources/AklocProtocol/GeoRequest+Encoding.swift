import AklocJSON

extension GeoRequest {
    /// The members after `"op"`, each starting with a comma (the CLI's side).
    func write(to writer: inout JSONWriter) {
        func point(_ name: StaticString, _ point: GeoPoint) {
            writer.raw(",")
            writer.key(name)
            writer.value(["latitude": .double(point.latitude), "longitude": .double(point.longitude)])
        }
        switch self {
        case .reverseGeocode(let coordinate):
            if let coordinate { point("coordinate", coordinate) }
        case .searchPlaces(let query, let near, let within, let limit):
            writer.raw(",\"query\":")
            writer.string(query)
            if let near { point("near", near) }
            writer.raw(",\"within\":")
            writer.number(within)
            writer.raw(",\"limit\":")
            writer.integer(Int64(limit))
        case .countries(let selector, let locale):
            switch selector {
            case .all: break
            case .code(let code):
                writer.raw(",\"code\":")
                writer.string(code)
            case .phoneCode(let phone):
                writer.raw(",\"phoneCode\":")
                writer.string(phone)
            case .query(let query):
                writer.raw(",\"query\":")
                writer.string(query)
            }
            if let locale {
                writer.raw(",\"locale\":")
                writer.string(locale)
            }
        }
    }
}
