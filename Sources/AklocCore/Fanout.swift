/// Collects one event per subscriber and merges identical ones into a single
/// `.send`, so the shell encodes each distinct event once however many
/// subscribers get it. `Key` identifies the event cheaply (an interval, a key
/// path), so no `Location` is hashed per subscriber.
struct Fanout<Key: Hashable> {
    private var index: [Key: Int] = [:]
    private var lastKey: Key?
    private var lastGroup = 0
    private(set) var groups: [(event: Engine.Event, ids: [SubscriberID])] = []

    var isEmpty: Bool { groups.isEmpty }

    mutating func add(_ id: SubscriberID, key: Key, event: () -> Engine.Event) {
        // Neighbours usually share a key (same policy, same schedule).
        if let lastKey, lastKey == key {
            groups[lastGroup].ids.append(id)
            return
        }
        if let found = index[key] {
            groups[found].ids.append(id)
            lastGroup = found
        } else {
            groups.append((event(), [id]))
            lastGroup = groups.count - 1
            index[key] = lastGroup
        }
        lastKey = key
    }

    func emit(into outputs: inout [Engine.Output]) {
        for group in groups { outputs.append(.send(group.ids, group.event)) }
    }
}

/// The grouping key for location change events: the key path and, for
/// observers that asked for it, the previous value.
struct ChangeKey: Hashable {
    var keyPath: KeyPath
    var old: KeyPathValue?
}
