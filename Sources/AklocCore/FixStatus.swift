/// How the receiver made its fix: gpsd's TPV `status` (gps.h `STATUS_*`).
///
/// gpsd leaves `status` out of a plain fix; libgps then reports 1, which is
/// `.plain`. A 0 (no fix, or unknown) with a position says nothing about the
/// quality, so it has no case: the location's `fixStatus` is then nil.
public enum FixStatus: String, Hashable, Sendable, Codable, CaseIterable {
    /// Plain GNSS (SPS), no corrections.
    case plain
    case dgps
    case rtkFixed
    case rtkFloat
    case deadReckoning
    /// GNSS combined with dead reckoning.
    case gnssDeadReckoning
    /// Time only: a surveyed-in or manually set position.
    case timeOnly
    case simulated
    /// Precise Positioning Service: the encrypted military P(Y) code.
    case pyCode

    /// gpsd's status number (gps.h `STATUS_FIX` … `STATUS_PPS_FIX`); nil for
    /// 0 and anything gpsd does not define.
    public init?(gpsd status: Int) {
        switch status {
        case 1: self = .plain
        case 2: self = .dgps
        case 3: self = .rtkFixed
        case 4: self = .rtkFloat
        case 5: self = .deadReckoning
        case 6: self = .gnssDeadReckoning
        case 7: self = .timeOnly
        case 8: self = .simulated
        case 9: self = .pyCode
        default: return nil
        }
    }

    /// gpsd's number for this status, the inverse of `init(gpsd:)`.
    public var gpsdValue: Int {
        switch self {
        case .plain: 1
        case .dgps: 2
        case .rtkFixed: 3
        case .rtkFloat: 4
        case .deadReckoning: 5
        case .gnssDeadReckoning: 6
        case .timeOnly: 7
        case .simulated: 8
        case .pyCode: 9
        }
    }

    /// The words people read (`akloc where`, `akloc sky`): gpsd's own names.
    public var label: String {
        switch self {
        case .plain: "GPS"
        case .dgps: "DGPS"
        case .rtkFixed: "RTK fixed"
        case .rtkFloat: "RTK float"
        case .deadReckoning: "dead reckoning"
        case .gnssDeadReckoning: "GNSS+DR"
        case .timeOnly: "time only"
        case .simulated: "simulated"
        case .pyCode: "P(Y)"
        }
    }
}
