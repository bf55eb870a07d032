// The core may not import Glibc or Foundation, and the standard library has no
// sin/cos/atan, so the few the haversine and the geo lookups need live here. Accuracy is a few
// ulps over the ranges used (|x| up to a few pi), far below a millimetre.

public enum Trigonometry {
    private static let halfPiHigh = 1.5707963267948966
    private static let halfPiLow = 6.123233995736766e-17

    /// Reduces `x` to r in [-pi/4, pi/4] with x = r + k * pi/2 (Cody-Waite);
    /// precise while |k| stays small, which it does for angles of the Earth.
    private static func reduce(_ x: Double) -> (r: Double, quadrant: Int) {
        let k = (x / halfPiHigh).rounded()
        let r = (x - k * halfPiHigh) - k * halfPiLow
        let quadrant = Int(k.truncatingRemainder(dividingBy: 4))
        return (r, quadrant < 0 ? quadrant + 4 : quadrant)
    }

    // Taylor kernels: on [-pi/4, pi/4] the first omitted term is below 1e-17.
    private static func sinKernel(_ r: Double) -> Double {
        let r2 = r * r
        var p = -1.0 / 355_687_428_096_000
        p = p * r2 + 1.0 / 1_307_674_368_000
        p = p * r2 - 1.0 / 6_227_020_800
        p = p * r2 + 1.0 / 39_916_800
        p = p * r2 - 1.0 / 362_880
        p = p * r2 + 1.0 / 5040
        p = p * r2 - 1.0 / 120
        p = p * r2 + 1.0 / 6
        return r - r * r2 * p
    }

    private static func cosKernel(_ r: Double) -> Double {
        let r2 = r * r
        var p = 1.0 / 20_922_789_888_000
        p = p * r2 - 1.0 / 87_178_291_200
        p = p * r2 + 1.0 / 479_001_600
        p = p * r2 - 1.0 / 3_628_800
        p = p * r2 + 1.0 / 40320
        p = p * r2 - 1.0 / 720
        p = p * r2 + 1.0 / 24
        p = p * r2 - 1.0 / 2
        return 1 + r2 * p
    }

    public static func sin(_ x: Double) -> Double {
        let (r, quadrant) = reduce(x)
        switch quadrant {
        case 0: return sinKernel(r)
        case 1: return cosKernel(r)
        case 2: return -sinKernel(r)
        default: return -cosKernel(r)
        }
    }

    public static func cos(_ x: Double) -> Double {
        let (r, quadrant) = reduce(x)
        switch quadrant {
        case 0: return cosKernel(r)
        case 1: return -sinKernel(r)
        case 2: return -cosKernel(r)
        default: return sinKernel(r)
        }
    }

    /// atan(z) for 0 <= z <= 1: two half-angle steps bring z below tan(pi/16),
    /// where the alternating series converges fast.
    private static func atanUnit(_ z: Double) -> Double {
        var t = z
        for _ in 0..<2 { t /= 1 + (1 + t * t).squareRoot() }
        let t2 = t * t
        // Horner form of t - t^3/3 + t^5/5 - ..., highest term first.
        var sum = 0.0
        var n = 27
        while n >= 1 {
            sum = sum * t2 + (n % 4 == 1 ? 1.0 : -1.0) / Double(n)
            n -= 2
        }
        return 4 * t * sum
    }

    /// atan2(y, x) for y >= 0 and x >= 0, all the haversine needs.
    public static func atan2NonNegative(_ y: Double, _ x: Double) -> Double {
        if y == 0 { return 0 }
        if x == 0 { return halfPiHigh }
        return y <= x ? atanUnit(y / x) : halfPiHigh - atanUnit(x / y)
    }

    /// atan2(y, x) in (-pi, pi], by quadrant from the non-negative case.
    public static func atan2(_ y: Double, _ x: Double) -> Double {
        let angle = atan2NonNegative(y.magnitude, x.magnitude)
        let upper = x < 0 ? Double.pi - angle : angle
        return y < 0 ? -upper : upper
    }
}
