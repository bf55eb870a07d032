import Synchronization

/// The k-d tree's split axes as the gazetteer has read them, two bits per
/// record (0: not read yet, else the axis + 1), shared by copies of the
/// gazetteer. Each record's axis sits in its 36-byte record, a cache line
/// away from the unit vector the search reads beside it; a search far from
/// every place visits several hundred nodes, and the records (2.5 MB) and
/// vectors (0.8 MB) together do not stay in a 2 MB L2 cache, while the
/// vectors and these 17 KB do. Filled as nodes are visited, so it holds
/// only what a process has read; relaxed atomics, since every writer stores
/// the same bits.
final class SplitAxes: @unchecked Sendable {
    // @unchecked: the words are only touched through their atomics.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private let wordCount: Int

    init(count: Int) {
        wordCount = (count + 31) / 32
        words = .allocate(capacity: wordCount)
        for index in 0..<wordCount { (words + index).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: wordCount)
        words.deallocate()
    }

    /// The axis of record `index` (below the count given at init), if read before.
    @inline(__always)
    func axis(_ index: Int) -> Int? {
        let bits = Int(truncatingIfNeeded: words[index >> 5].load(ordering: .relaxed) >> UInt64((index & 31) * 2)) & 3
        return bits == 0 ? nil : bits - 1
    }

    /// Remembers the axis (0 ... 2) of record `index`.
    func remember(_ index: Int, axis: Int) {
        words[index >> 5].bitwiseOr(UInt64(axis + 1) << UInt64((index & 31) * 2), ordering: .relaxed)
    }
}
