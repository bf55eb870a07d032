import AklocCore
import AklocJSON

extension CountryTable.Entry {
    /// The records of iso-codes' `iso_3166-1.json` ({"3166-1": [{"alpha_2":
    /// …, "alpha_3": …, "numeric": …, "name": …, "official_name"?: …,
    /// "common_name"?: …}, …]}), parsed with the project's strict JSON
    /// reader. A file that is not that shape is `GeoDataReader.Error.corrupt`.
    public static func iso3166(json bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) -> [Self] {
        let value: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let parsed): value = parsed
        case .failure(let error): throw GeoDataReader.Error(.corrupt, "iso_3166-1.json: \(error)")
        }
        guard let records = value["3166-1"]?.arrayValue else {
            throw GeoDataReader.Error(.corrupt, "iso_3166-1.json has no \"3166-1\" array")
        }
        var entries: [Self] = []
        entries.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            guard let alpha2 = record["alpha_2"]?.stringValue, let alpha3 = record["alpha_3"]?.stringValue,
                let numeric = record["numeric"]?.stringValue, let name = record["name"]?.stringValue
            else {
                throw GeoDataReader.Error(.corrupt, "iso_3166-1.json record \(index) lacks a code or name")
            }
            entries.append(
                Self(
                    alpha2: alpha2, alpha3: alpha3, numeric: numeric, name: name,
                    officialName: record["official_name"]?.stringValue,
                    commonName: record["common_name"]?.stringValue))
        }
        return entries
    }
}
