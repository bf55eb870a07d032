import AklocGPSD

/// Where fixes come from now, and how a reload makes the next one.
struct SourceSlot {
    var current: (any FixSource)?
    let make: (GPSDEndpoint, _ device: String?) -> any FixSource
}
