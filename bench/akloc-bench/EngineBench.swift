import AklocCore
import AklocJSON
import AklocProtocol
import Foundation

/// Core engine throughput: AklocCore's `Engine` driven directly, no I/O.
/// `subscribers` subscribers with a mix of policies are connected and started,
/// then every TPV of a recorded gpsd stream (a `.chk` file) is fed once as a
/// fix, one second apart on a manual clock. A decision is one subscriber
/// stream offered one fix (throttle, filters, grouping into events).
enum EngineBench {
    struct Result {
        var subscribers: Int
        var streams: Int
        var fixes: Int
        var decisions: Int
        var deliveries: Int
        var seconds: Double
        var perFixMedianMicros: Double
        var perFixMaxMicros: Double
        var decisionsPerSecond: Double { Double(decisions) / seconds }
    }

    /// The TPVs of a gpsd `.chk` file as locations (mode >= 2 with a position).
    static func fixes(fromCheckFile path: String) throws -> [Location] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var fixes: [Location] = []
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{\"class\":\"TPV\"") {
            guard case .success(let tpv) = JSONValue.parse(Array(line.utf8)),
                let mode = tpv["mode"]?.doubleValue, mode >= 2,
                let latitude = tpv["lat"]?.doubleValue, let longitude = tpv["lon"]?.doubleValue
            else { continue }
            fixes.append(
                Location(
                    latitude: latitude, longitude: longitude, mode: mode >= 3 ? .threeD : .twoD,
                    altitude: tpv["altMSL"]?.doubleValue, horizontalAccuracy: tpv["eph"]?.doubleValue,
                    speed: tpv["speed"]?.doubleValue, course: tpv["track"]?.doubleValue, device: "/dev/ttyBENCH"))
        }
        guard !fixes.isEmpty else { throw BenchError("no TPV with a position in \(path)") }
        return fixes
    }

    /// The policy mix, by subscriber number: a fifth each of the defaults
    /// (5 s / 300 s), every fix, 1 s with a 10 m distance filter, every fix
    /// with a 5 m accuracy filter, and KVO observers (`myLocation` at 2 s; every
    /// tenth subscriber also observes `rawLocation`).
    static func request(for number: Int) throws -> [Engine.Request] {
        var requests: [Engine.Request]
        switch number % 5 {
        case 0: requests = [.startUpdatingLocation(policy: .init(ThrottlePolicy()), everyEpoch: false)]
        case 1:
            requests = [.startUpdatingLocation(policy: .init(try ThrottlePolicy(minInterval: 0)), everyEpoch: false)]
        case 2:
            requests = [
                .startUpdatingLocation(
                    policy: .init(try ThrottlePolicy(minInterval: 1, distanceFilter: 10)), everyEpoch: false)
            ]
        case 3:
            requests = [
                .startUpdatingLocation(
                    policy: .init(try ThrottlePolicy(minInterval: 0, desiredAccuracy: 5)), everyEpoch: false)
            ]
        default:
            requests = [
                .observe(
                    try KeyPath(parsing: "myLocation"), initial: false, old: true,
                    policy: .init(try ThrottlePolicy(minInterval: 2)))
            ]
        }
        if number % 10 == 9 {
            requests.append(.observe(try KeyPath(parsing: "rawLocation"), initial: false, old: false, policy: nil))
        }
        return requests
    }

    static func run(subscribers: Int, fixes input: [Location], rounds: Int) throws -> Result {
        var engine = Engine()
        var now = Instant.seconds(1_000)
        _ = engine.handle(.sourceConnected(name: "gpsd://bench"), at: now)
        var token: RequestToken = 1
        var streams = 0
        for number in 0..<subscribers {
            let id = SubscriberID(number + 1)
            _ = engine.handle(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)), at: now)
            for request in try request(for: number) {
                _ = engine.handle(.request(id, token, request), at: now)
                token += 1
                streams += 1
            }
        }
        var deliveries = 0
        var perFix: [Int64] = []
        let base = FixTime(secondsSince1970: 1_700_000_000)
        var sequence = 0
        let started = Posix.monotonicNanos()
        for _ in 0..<rounds {
            for fix in input {
                var location = fix
                location.timestamp = FixTime(secondsSince1970: base.secondsSince1970 + Int64(sequence))
                sequence += 1
                now = Instant(nanoseconds: now.nanoseconds + 1_000_000_000)
                let before = Posix.monotonicNanos()
                let outputs = engine.handle(.fix(location), at: now)
                perFix.append(Posix.monotonicNanos() - before)
                for case .send(let ids, _) in outputs { deliveries += ids.count }
            }
        }
        let seconds = Double(Posix.monotonicNanos() - started) / 1e9
        perFix.sort()
        return Result(
            subscribers: subscribers, streams: streams, fixes: perFix.count, decisions: perFix.count * streams,
            deliveries: deliveries, seconds: seconds,
            perFixMedianMicros: Double(perFix[perFix.count / 2]) / 1e3,
            perFixMaxMicros: Double(perFix.last ?? 0) / 1e3)
    }
}
