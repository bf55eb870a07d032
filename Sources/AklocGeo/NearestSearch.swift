import AklocCore

/// The nearest record over the implicit k-d tree (the middle element of
/// each range splits it), exactly the record a plain depth-first
/// branch-and-bound returns, ties included: the first, in its
/// near-side-first order, of the records at the least distance. That plain
/// search bounded a far side by its splitting plane alone, and was slow in
/// two cases (docs/geodata.md, "Speed"):
///
/// - a point far from every place (mid-ocean: the nearest 3 000 km away)
///   opened a thousand cells. A cell's bound is now the box its ancestors'
///   splits cut out, and the records being unit vectors, also the most the
///   box lets them point towards the target;
/// - a point whose country's places lie beyond other countries' (northern
///   Greenland, a sea point off Fiordland) read a whole subtree, 4 000 to
///   35 000 records, before its first candidate gave a bound. A filtered
///   search now first goes best-first (cells in order of their bound) to
///   learn the least distance, then depth-first in the plain order from just
///   above it, which opens only the cells that reach it.
///
/// Either way a cell is skipped only when its bound is not below the best so
/// far, and the bound never exceeds the squared distance, as computed, of a
/// record in the cell (below), so no skipped record could have replaced the
/// best (`<`): the depth-first order meets the same records at the least
/// distance, and takes the same first one.
struct NearestSearch {
    /// The box of a cell: per axis, the range its records' coordinates lie in.
    typealias Box = (lo: (Double, Double, Double), hi: (Double, Double, Double))

    /// Slack for the direction bound: a Float vector's components are within
    /// 6e-8 (relative) of the unit vector's, so its squared length is at
    /// least 1 − 1.2e-7; the Double arithmetic's rounding is far below that.
    static let directionSlack = 1e-6

    let target: (x: Double, y: Double, z: Double)
    private(set) var best = -1
    private(set) var bestSquared: Double

    /// A search that takes only records nearer than `threshold` (squared chord).
    init(target: (x: Double, y: Double, z: Double), threshold: Double) {
        self.target = target
        bestSquared = threshold
    }

    static let everywhere: Box = ((-1, -1, -1), (1, 1, 1))

    /// The nearest record that `filter` (a country key) accepts, or -1.
    static func nearest(
        in gazetteer: Gazetteer, to target: (x: Double, y: Double, z: Double), filter: UInt16?
    ) throws(GeoDataReader.Error) -> Int {
        var threshold = Double.infinity
        if let filter {
            threshold = try nearestOnPath(in: gazetteer, to: target, filter: filter)
            if threshold == .infinity {
                var first = NearestSearch(target: target, threshold: threshold)
                try first.visitBestFirst(gazetteer, filter)
                guard first.best >= 0 else { return -1 }
                threshold = first.bestSquared
            }
            threshold = threshold.nextUp
        }
        var search = NearestSearch(target: target, threshold: threshold)
        try search.visitDepthFirst(gazetteer, 0, gazetteer.count, filter, Self.everywhere, bound: 0)
        guard search.best >= 0 || threshold == .infinity else {
            throw GeoDataReader.Error(.corrupt, "the k-d tree's splits do not order its records")
        }
        return search.best
    }

    /// The squared distance of the nearest accepted record on the path from
    /// the root down the near sides (infinity if none): where the point is
    /// among its country's places, a bound close to the answer for 17 reads.
    private static func nearestOnPath(
        in gazetteer: Gazetteer, to target: (x: Double, y: Double, z: Double), filter: UInt16
    ) throws(GeoDataReader.Error) -> Double {
        var probe = NearestSearch(target: target, threshold: .infinity)
        var cell = (0, gazetteer.count, Self.everywhere)
        while cell.0 < cell.1 { cell = try probe.split(gazetteer, cell.0, cell.1, cell.2, filter).near }
        return probe.bestSquared
    }

    /// A lower bound of the squared distance, as `split` computes it,
    /// from the target to any record in `box`; the largest of three:
    ///
    /// - the distance to the box. Per axis, the offset is the difference
    ///   with the box side the records lie beyond; rounding is monotonic, so
    ///   each record's own difference is at least that, and the squares are
    ///   summed in the same order;
    /// - for unit vectors, |t − p|² = 2 − 2 t·p, and t·p is at most the
    ///   largest t·c over the box's corners (one per axis, linear), less the
    ///   slack for Float vectors. Far from the target it is the tighter one:
    ///   a box of a patch of sphere reaches much nearer inside the sphere
    ///   than any of its records;
    /// - between the two, the Lagrangian bound below (the first is its
    ///   λ = 1, the second its limit at λ = 0): a third fewer cells opened
    ///   for a point far from every place.
    @inline(__always)
    func bound(_ box: Box) -> Double {
        let ox = max(box.lo.0 - target.x, target.x - box.hi.0, 0)
        let oy = max(box.lo.1 - target.y, target.y - box.hi.1, 0)
        let oz = max(box.lo.2 - target.z, target.z - box.hi.2, 0)
        let reach =
            max(target.x * box.lo.0, target.x * box.hi.0) + max(target.y * box.lo.1, target.y * box.hi.1)
            + max(target.z * box.lo.2, target.z * box.hi.2)
        let simple = max(ox * ox + oy * oy + oz * oz, 2 - 2 * reach - Self.directionSlack)
        // Lagrange: for any λ > 0, t·p ≤ λ/2 + Σ max over the box side of
        // (t_i p_i − λ p_i²/2) when |p| = 1, reached at p_i = clamp(t_i / λ).
        // The best λ makes that point a unit vector; a few fixed-point steps
        // on the clamped axes get near it, and any λ gives a valid bound.
        var lambda = 1.0
        for _ in 0..<3 {
            var fixed = 0.0
            var free = 0.0
            func axis(_ t: Double, _ lo: Double, _ hi: Double) {
                let c = t / lambda
                if c < lo { fixed += lo * lo } else if c > hi { fixed += hi * hi } else { free += t * t }
            }
            axis(target.x, box.lo.0, box.hi.0)
            axis(target.y, box.lo.1, box.hi.1)
            axis(target.z, box.lo.2, box.hi.2)
            guard fixed < 1, free > 1e-12 else { return simple }
            lambda = (free / (1 - fixed)).squareRoot()
        }
        func term(_ t: Double, _ lo: Double, _ hi: Double) -> Double {
            let c = min(max(t / lambda, lo), hi)
            return t * c - lambda / 2 * c * c
        }
        let dual =
            lambda / 2 + term(target.x, box.lo.0, box.hi.0) + term(target.y, box.lo.1, box.hi.1)
            + term(target.z, box.lo.2, box.hi.2)
        return max(simple, 2 - 2 * dual - Self.directionSlack)
    }

    /// Considers record `mid` of `box`; returns the near and far side of
    /// its split as (low, high, box), and the target's offset from its plane.
    @inline(__always)
    mutating func split(
        _ gazetteer: Gazetteer, _ low: Int, _ high: Int, _ box: Box, _ filter: UInt16?
    ) throws(GeoDataReader.Error) -> (near: (Int, Int, Box), far: (Int, Int, Box), diff: Double) {
        let mid = low + (high - low) / 2
        let (v, axis) = try gazetteer.node(mid)
        let dx = target.x - v.0
        let dy = target.y - v.1
        let dz = target.z - v.2
        let squared = dx * dx + dy * dy + dz * dz
        if squared < bestSquared {
            if try filter.map({ (key) throws(GeoDataReader.Error) in try gazetteer.countryKey(at: mid) == key }) ?? true
            {
                best = mid
                bestSquared = squared
            }
        }
        // The records before `mid` are at most its coordinate on the axis, those after at least.
        var below = box
        var above = box
        let diff: Double
        switch axis {
        case 0:
            (below.hi.0, above.lo.0, diff) = (v.0, v.0, dx)
        case 1:
            (below.hi.1, above.lo.1, diff) = (v.1, v.1, dy)
        default:
            (below.hi.2, above.lo.2, diff) = (v.2, v.2, dz)
        }
        let before = (low, mid, below)
        let after = (mid + 1, high, above)
        return diff <= 0 ? (before, after, diff) : (after, before, diff)
    }

    /// The plain search's order: the near side, then the far side. `bound`
    /// is a lower bound for `box` (the parent's, for a near side: its box
    /// is the parent's, cut on the far side of the target); a far side's is
    /// computed only when its splitting plane, the plain search's bound,
    /// does not already rule it out.
    private mutating func visitDepthFirst(
        _ gazetteer: Gazetteer, _ low: Int, _ high: Int, _ filter: UInt16?, _ box: Box, bound: Double
    ) throws(GeoDataReader.Error) {
        guard low < high, bound < bestSquared else { return }
        let (near, far, diff) = try split(gazetteer, low, high, box, filter)
        try visitDepthFirst(gazetteer, near.0, near.1, filter, near.2, bound: bound)
        guard far.0 < far.1, diff * diff < bestSquared else { return }
        try visitDepthFirst(gazetteer, far.0, far.1, filter, far.2, bound: self.bound(far.2))
    }

    /// A cell waiting in the best-first pass.
    private struct Cell {
        var bound: Double
        var low: Int
        var high: Int
        var box: Box
    }

    /// Cells in order of their bound, each down its near sides (bounded by
    /// the cell's bound) while the far sides wait in a heap, until the
    /// nearest waiting cannot hold a nearer record.
    private mutating func visitBestFirst(_ gazetteer: Gazetteer, _ filter: UInt16?) throws(GeoDataReader.Error) {
        var heap: [Cell] = []
        heap.reserveCapacity(64)
        var cell = Cell(bound: 0, low: 0, high: gazetteer.count, box: Self.everywhere)
        while true {
            while cell.low < cell.high, cell.bound < bestSquared {
                let (near, far, diff) = try split(gazetteer, cell.low, cell.high, cell.box, filter)
                if far.0 < far.1, diff * diff < bestSquared {
                    let farBound = bound(far.2)
                    if farBound < bestSquared {
                        Self.push(&heap, Cell(bound: farBound, low: far.0, high: far.1, box: far.2))
                    }
                }
                cell = Cell(bound: cell.bound, low: near.0, high: near.1, box: near.2)
            }
            guard let next = Self.pop(&heap), next.bound < bestSquared else { return }
            cell = next
        }
    }

    // A binary min-heap on the bound.

    private static func push(_ heap: inout [Cell], _ cell: Cell) {
        heap.append(cell)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].bound < heap[parent].bound else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func pop(_ heap: inout [Cell]) -> Cell? {
        guard let last = heap.popLast() else { return nil }
        guard !heap.isEmpty else { return last }
        let top = heap[0]
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            let right = left + 1
            let least = right < heap.count && heap[right].bound < heap[left].bound ? right : left
            guard heap[least].bound < heap[parent].bound else { break }
            heap.swapAt(least, parent)
            parent = least
        }
        return top
    }
}
