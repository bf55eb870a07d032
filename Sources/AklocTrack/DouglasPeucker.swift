import AklocCore

/// Douglas–Peucker line simplification with a tolerance in metres: keeps
/// the ends, and every point further than `tolerance` from the line
/// through the points kept around it. Distances are taken on a local
/// equirectangular projection, which is well under 1% off for the spans
/// one tolerance covers (and exact enough for deciding what to draw).
public enum DouglasPeucker {
    /// Which points to keep.
    public static func keep(latitudes: [Double], longitudes: [Double], tolerance: Double) -> [Bool] {
        let count = latitudes.count
        guard count > 2, tolerance > 0 else { return Array(repeating: true, count: count) }
        let metresPerDegree = 6_371_008.8 * Double.pi / 180
        let scale = Trigonometry.cos(latitudes[0] * Double.pi / 180)
        var x = [Double](repeating: 0, count: count)
        var y = [Double](repeating: 0, count: count)
        for index in 0..<count {
            var dlon = longitudes[index] - longitudes[0]
            if dlon > 180 { dlon -= 360 } else if dlon < -180 { dlon += 360 }
            x[index] = dlon * metresPerDegree * scale
            y[index] = (latitudes[index] - latitudes[0]) * metresPerDegree
        }
        var kept = [Bool](repeating: false, count: count)
        kept[0] = true
        kept[count - 1] = true
        // An explicit stack: a long straight-ish track would recurse deeply.
        var stack = [(0, count - 1)]
        let squared = tolerance * tolerance
        while let (first, last) = stack.popLast() {
            guard last > first + 1 else { continue }
            let dx = x[last] - x[first]
            let dy = y[last] - y[first]
            let length = dx * dx + dy * dy
            var farthest = first
            var farthestDistance = -1.0
            for index in (first + 1)..<last {
                let px = x[index] - x[first]
                let py = y[index] - y[first]
                let distance: Double
                if length == 0 {
                    distance = px * px + py * py
                } else {
                    let t = max(0, min(1, (px * dx + py * dy) / length))
                    let ex = px - t * dx
                    let ey = py - t * dy
                    distance = ex * ex + ey * ey
                }
                if distance > farthestDistance {
                    farthestDistance = distance
                    farthest = index
                }
            }
            if farthestDistance > squared {
                kept[farthest] = true
                stack.append((first, farthest))
                stack.append((farthest, last))
            }
        }
        return kept
    }

}
