import AklocCore
import Foundation
import Testing

/// Replays the fixes gpsd itself produced for real receiver captures (the
/// `.chk` files of gpsd's regression suite) through the engine, and checks the
/// deliveries against the rule restated here independently: plain loops over
/// fix times and speeds, Foundation's trigonometry, no `Throttle`.
@Suite struct ReplayTests {
    struct TPV {
        var location: Location
        var time: String?
    }

    struct Epoch {
        var receipt: Double
        var tpvs: [TPV]
        var first: TPV { tpvs[0] }
        /// gpspipe's view of the epoch: every TPV's fields, later ones winning
        /// (restated here, not the engine's merge).
        var merged: Location {
            var result = tpvs[0].location
            for tpv in tpvs.dropFirst() {
                let later = tpv.location
                result.latitude = later.latitude
                result.longitude = later.longitude
                result.mode = later.mode
                if let value = later.altitude { result.altitude = value }
                if let value = later.horizontalAccuracy { result.horizontalAccuracy = value }
                if let value = later.speed { result.speed = value }
                if let value = later.course { result.course = value }
            }
            return result
        }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let bundled = packageRoot.appendingPathComponent("Tests/Fixtures/gpsd-logs")

    /// The full shared set, when this checkout sits next to it.
    static let shared: URL? = {
        let candidates = [
            ProcessInfo.processInfo.environment["AKLOC_GPSD_LOGS"].map { URL(fileURLWithPath: $0) },
            packageRoot.appendingPathComponent("../shared/gpsd-logs").standardizedFileURL,
            URL(fileURLWithPath: "/work/shared/gpsd-logs"),
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0.path) }
    }()

    static func chkFiles(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".chk") }.sorted().map { directory.appendingPathComponent($0) }
    }

    static var allLogs: [URL] {
        var logs = chkFiles(in: bundled)
        if let shared {
            let have = Set(logs.map(\.lastPathComponent))
            logs += chkFiles(in: shared).filter { !have.contains($0.lastPathComponent) }
        }
        return logs
    }

    /// TPVs with a fix (mode >= 2) and a position, in file order.
    static func fixes(in file: URL) throws -> [TPV] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var result: [TPV] = []
        for line in text.split(whereSeparator: \.isNewline) where line.contains("\"class\":\"TPV\"") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let mode = object["mode"] as? Int, mode >= 2,
                let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { continue }
            let time = object["time"] as? String
            let location = Location(
                latitude: lat, longitude: lon, mode: mode == 2 ? .twoD : .threeD,
                altitude: object["altMSL"] as? Double, horizontalAccuracy: object["eph"] as? Double,
                speed: object["speed"] as? Double, course: object["track"] as? Double,
                timestamp: time.flatMap(FixTime.init(iso8601:)), device: "/dev/ttyUSB0")
            result.append(TPV(location: location, time: time))
        }
        return result
    }

    enum Spacing: CaseIterable {
        /// One epoch per second.
        case oneSecond
        /// As far apart as the fix times say (1 s when they go backwards or jump over an hour).
        case fixTimes
    }

    /// Consecutive TPVs with the same time are one epoch.
    static func epochs(_ tpvs: [TPV], spacing: Spacing) -> [Epoch] {
        var epochs: [Epoch] = []
        var clock = 0.0
        for tpv in tpvs {
            if let last = epochs.last, let time = tpv.time, time == last.first.time {
                epochs[epochs.count - 1].tpvs.append(tpv)
                continue
            }
            if let last = epochs.last {
                var step = 1.0
                if spacing == .fixTimes, let a = last.first.location.timestamp, let b = tpv.location.timestamp {
                    let delta =
                        Double(b.secondsSince1970 - a.secondsSince1970)
                        + Double(b.nanoseconds - a.nanoseconds) / 1e9
                    if delta > 0, delta <= 3600 { step = delta }
                }
                clock = last.receipt + step
            }
            epochs.append(Epoch(receipt: clock, tpvs: [tpv]))
        }
        return epochs
    }

    static func haversine(_ a: Location, _ b: Location) -> Double {
        let p1 = a.latitude * .pi / 180
        let p2 = b.latitude * .pi / 180
        let dp = p2 - p1
        let dl = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * Location.earthRadius * atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    /// When each epoch (fed as one TPV) is delivered, restated from
    /// docs/semantics.md "Epochs": one without a time at once; while the
    /// device's shape is not known (until two consecutive timed epochs had
    /// the same fields) when the next epoch begins; after that at once when
    /// it has every field of the shape, else when the next begins. The
    /// shape then follows an epoch with at least its fields, or two in a
    /// row with the same fewer. The last one when the source goes (1 s after it).
    static func deliveryTimes(_ epochs: [Epoch]) -> [Double] {
        func fields(_ location: Location) -> [Bool] {
            [
                location.altitude != nil, location.horizontalAccuracy != nil, location.speed != nil,
                location.course != nil, location.mode == .threeD,
            ]
        }
        var times: [Double] = []
        var known = false
        var last: [Bool]?
        var smaller: [Bool]?
        for (index, epoch) in epochs.enumerated() {
            let next = index + 1 < epochs.count ? epochs[index + 1].receipt : epoch.receipt + 1
            guard epoch.first.time != nil else {
                times.append(epoch.receipt)
                continue
            }
            let shape = fields(epoch.merged)
            func covers(_ a: [Bool], _ b: [Bool]) -> Bool { zip(a, b).allSatisfy { $0 || !$1 } }
            let complete = known && last.map { covers(shape, $0) } ?? false
            times.append(complete ? epoch.receipt : next)
            if !known {
                if shape == last { known = true }
                last = shape
            } else if let current = last, covers(shape, current) || shape == smaller {
                // Grown, or smaller twice in a row: the new shape.
                last = shape
                smaller = nil
            } else {
                smaller = shape
            }
        }
        return times
    }

    /// The epochs (by index) the rule delivers, restated from DESIGN §2:
    /// the interval counts between deliveries, the speed between receipts.
    static func expectedDeliveries(_ epochs: [Epoch], policy: ThrottlePolicy) -> [Int] {
        let times = deliveryTimes(epochs)
        var delivered: [Int] = []
        var lastAt = 0.0
        var lastPlace: Location?
        for (index, epoch) in epochs.enumerated() {
            let location = epoch.merged
            var speed = location.speed ?? 0
            if location.speed == nil, index > 0 {
                let previous = epochs[index - 1]
                let seconds = epoch.receipt - previous.receipt
                if seconds > 0 { speed = haversine(previous.merged, location) / seconds }
            }
            if policy.desiredAccuracy > 0, let accuracy = location.horizontalAccuracy, accuracy > policy.desiredAccuracy
            {
                continue
            }
            guard let place = lastPlace else {
                delivered.append(index)
                lastAt = times[index]
                lastPlace = location
                continue
            }
            let elapsed = times[index] - lastAt + 1e-6
            let moving = speed > 0 && speed >= policy.updateSpeed
            var deliver = elapsed >= (moving ? policy.minInterval : policy.maxInterval)
            if deliver, moving, policy.distanceFilter > 0, elapsed < policy.maxInterval {
                deliver = haversine(place, location) >= policy.distanceFilter
            }
            if deliver {
                delivered.append(index)
                lastAt = times[index]
                lastPlace = location
            }
        }
        return delivered
    }

    /// Feeds each epoch as one TPV (its merged fix: how gpsd splits epochs is
    /// EpochAssemblerTests' and the gpspipe comparison's subject, the
    /// throttle is this one's), then the source going away, which ends the
    /// last epoch; returns the epoch indices subscriber 1 got deliveries of.
    static func replay(_ epochs: [Epoch], policy: ThrottlePolicy) -> (deliveries: [Int], epochs: UInt64) {
        var engine = Engine()
        _ = engine.handle(.sourceConnected(name: "gpsfake"), at: .zero)
        _ = engine.handle(.connect(1, .init(uid: 0, authorization: .authorizedAlways)), at: .zero)
        _ = engine.handle(.request(1, 1, .startUpdatingLocation(policy: .init(policy), everyEpoch: false)), at: .zero)
        var delivered: [Int] = []
        func collect(_ outputs: [Engine.Output], current: Int) {
            for output in outputs {
                guard case .send(let ids, .didUpdateLocation(let location, let after)) = output, ids.contains(1)
                else { continue }
                // Until the shape is known an epoch waits for the next one, and
                // later one that lacks a field of the one before.
                let index =
                    current == epochs.count || (current > 0 && location == epochs[current - 1].merged)
                    ? current - 1 : current
                #expect(location == epochs[index].merged)
                delivered.append(index)
                if delivered.count > 1 { #expect(after != nil) }
            }
        }
        for (index, epoch) in epochs.enumerated() {
            collect(engine.handle(.fix(epoch.merged), at: .seconds(1 + epoch.receipt)), current: index)
        }
        let end = Instant.seconds(2 + (epochs.last?.receipt ?? 0))
        collect(engine.handle(.sourceDisconnected, at: end), current: epochs.count)
        return (delivered, engine.snapshot.counters.epochs)
    }

    static let policies: [ThrottlePolicy] = [
        ThrottlePolicy(),
        try! ThrottlePolicy(minInterval: 2, maxInterval: 20),
        try! ThrottlePolicy(updateSpeed: 1, minInterval: 1, maxInterval: 30, distanceFilter: 15),
        try! ThrottlePolicy(minInterval: 0, maxInterval: 10, desiredAccuracy: 5),
    ]

    @Test(arguments: allLogs)
    func engineMatchesTheRuleOnRealCaptures(file: URL) throws {
        let tpvs = try Self.fixes(in: file)
        for stripSpeed in [false, true] {
            let input =
                stripSpeed
                ? tpvs.map {
                    var t = $0; t.location.speed = nil; return t
                } : tpvs
            for spacing in Spacing.allCases {
                let epochs = Self.epochs(input, spacing: spacing)
                for policy in Self.policies {
                    let (got, engineEpochs) = Self.replay(epochs, policy: policy)
                    #expect(engineEpochs == UInt64(epochs.count), "\(file.lastPathComponent)")
                    #expect(
                        got == Self.expectedDeliveries(epochs, policy: policy),
                        "\(file.lastPathComponent) \(spacing) speed stripped: \(stripSpeed) \(policy)")
                }
            }
        }
    }

    @Test func theBundledCapturesArePresent() {
        let names = Set(Self.chkFiles(in: Self.bundled).map(\.lastPathComponent))
        #expect(names.contains("humminbird-M37.log.chk"))
        #expect(
            FileManager.default.fileExists(
                atPath: Self.bundled.appendingPathComponent("LICENSE-gpsd-test-data.txt").path))
    }

    @Test func aMovingBoatIsDeliveredEveryFiveSeconds() throws {
        // humminbird-M37: a powerboat at 2-3 m/s, one epoch a second.
        let epochs = Self.epochs(
            try Self.fixes(in: Self.bundled.appendingPathComponent("humminbird-M37.log.chk")), spacing: .oneSecond)
        let (got, _) = Self.replay(epochs, policy: ThrottlePolicy())
        #expect(got == Self.expectedDeliveries(epochs, policy: ThrottlePolicy()))
        // Five seconds apart as the subscriber sees them, or one cycle more
        // when an epoch of the receiver's waited for the next.
        let times = Self.deliveryTimes(epochs)
        let gaps = zip(got, got.dropFirst()).map { times[$1] - times[$0] }
        #expect(gaps.allSatisfy { $0 >= 5 && $0 <= 6 }, "\(gaps)")
        #expect(got.count >= 5)
    }

    @Test(.enabled(if: shared != nil, "needs the shared gpsd-logs"))
    func aStillReceiverGetsOnlyTheFirstFixWithinFiveMinutes() throws {
        // mt3339: a stationary Adafruit HAT, 32 epochs, speeds around 0.03 m/s.
        let epochs = Self.epochs(
            try Self.fixes(in: Self.shared!.appendingPathComponent("mt3339.log.chk")), spacing: .oneSecond)
        #expect(epochs.count > 20)
        #expect(Self.replay(epochs, policy: ThrottlePolicy()).deliveries == [0])
        // And its heartbeat, with a 10 s maximum.
        let (heartbeat, _) = Self.replay(epochs, policy: try ThrottlePolicy(minInterval: 5, maxInterval: 10))
        #expect(heartbeat == Array(stride(from: 0, to: epochs.count, by: 10)))
    }

    @Test(.enabled(if: shared != nil, "needs the shared gpsd-logs"))
    func aSailingBoatIsMostlyMoving() throws {
        // bundg_zeus_9: a boat at about 3 m/s for 150 epochs.
        let epochs = Self.epochs(
            try Self.fixes(in: Self.shared!.appendingPathComponent("bundg_zeus_9.log.chk")), spacing: .oneSecond)
        let (got, _) = Self.replay(epochs, policy: ThrottlePolicy())
        #expect(got.count >= 20)
        #expect(got == Self.expectedDeliveries(epochs, policy: ThrottlePolicy()))
    }
}
