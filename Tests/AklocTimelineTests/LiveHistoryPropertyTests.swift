import AklocCore
import AklocJSON
import AklocProtocol
import AklocTestSupport
import AklocTimeline
import AklocTrack
import Glibc
import Testing

/// Live and history agree (DESIGN §15), as a property on virtual time: over
/// random seeded tracks recorded through the real track recorder, the
/// visits the live path tells the engine (`visited`: the `visit` key path
/// and `didVisit`) are the visits the `visits` op computes from the journal
/// over the same fixes, departures and centres included; with a daemon
/// restart in the middle of some, where the live detector is primed from
/// the journal.
@Suite struct LiveHistoryPropertyTests {
    let directory = TestSockets.temporaryDirectory()

    /// A day of random stays, drives, walks, gaps with and without a jump,
    /// wild fixes and poor fixes, one seed each.
    static func randomTrack(seed: UInt64) -> [TimelineFix] {
        var track = TrackMaker(start: 1_780_000_000, seed: seed)
        var random = SplitMix(seed: seed &* 7919)
        for _ in 0..<random.int(4...12) {
            switch random.int(0...9) {
            case 0...3:
                track.stay(
                    random.uniform(60, 2400), every: random.uniform(1, 20), jitter: random.uniform(1, 40))
            case 4...6:
                track.move(
                    random.uniform(100, 15_000), speed: random.uniform(0.8, 35), every: random.uniform(1, 8),
                    bearing: random.uniform(0, 360))
            case 7:
                track.gap(random.uniform(10, 5400))
                if random.int(0...1) == 1 { track.jump(random.uniform(0, 8000)) }
            case 8:
                // Wild fixes: far off for a moment.
                for _ in 0..<random.int(1...3) {
                    track.fix(east: random.uniform(-1500, 1500), north: random.uniform(-1500, 1500))
                    track.gap(random.uniform(1, 5))
                }
            default:
                // Poor fixes: accuracy worse than the radius.
                for _ in 0..<random.int(1...20) {
                    track.fix(
                        east: random.uniform(-300, 300), north: random.uniform(-300, 300),
                        accuracy: random.uniform(101, 800))
                    track.gap(random.uniform(1, 10))
                }
            }
        }
        return track.fixes
    }

    /// Records fixes as the daemon would, the clock at each fix's receipt.
    static func record(_ fixes: ArraySlice<TimelineFix>, on running: TimelineFeatureTests.Running) {
        running.host.sync {
            for fix in fixes {
                let wall = running.host.time.wallNow()
                let now = Double(wall.secondsSince1970) + Double(wall.nanoseconds) / 1e9
                if fix.time > now { running.host.time.advance(by: fix.time - now) }
            }
        }
        running.record(Array(fixes))
    }

    /// The live visits: each `visited` input, a departure replacing its arrival.
    static func live(_ inputs: [Engine.Input]) throws -> [JSONValue] {
        var visits: [JSONValue] = []
        for input in inputs {
            guard case .visited(let bytes, let departed) = input else { continue }
            let visit = try JSONValue.parse(bytes).get()
            #expect((visit["departure"] != nil) == departed, "a departure has its time, an arrival none")
            if let index = visits.lastIndex(where: { $0["arrival"] == visit["arrival"] }) {
                visits[index] = visit
            } else {
                visits.append(visit)
            }
        }
        return visits
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func liveVisitsAreTheHistoryVisits(seed: UInt64) throws {
        defer { _ = system("rm -rf '\(directory)'") }
        let fixes = Self.randomTrack(seed: seed)
        try #require(fixes.count > 1)
        var inputs: [Engine.Input] = []
        var start = 0
        if seed % 3 == 0 {
            // aklocd restarts in the middle: the live detector starts again from the journal.
            start = fixes.count / 3 + Int(seed % 7) * fixes.count / 14
            let first = try TimelineFeatureTests.Running(directory: directory)
            Self.record(fixes[..<start], on: first)
            inputs += first.host.sync { first.host.inputs }
        }
        let running = try TimelineFeatureTests.Running(
            directory: directory, wallClock: start > 0 ? fixes[start - 1].time : nil)
        Self.record(fixes[start...], on: running)
        inputs += running.host.sync { running.host.inputs }
        let live = try Self.live(inputs)
        let range = TimelineQuery(
            since: TimelineFix.fixTime(fixes[0].time), until: TimelineFix.fixTime(fixes.last!.time))
        let history = try #require(try running.ask(.visits(range)).get()["visits"]?.arrayValue)
        #expect(live.count == history.count, "seed \(seed)")
        for (told, computed) in zip(live, history) {
            if computed["departure"] != nil {
                #expect(told == computed, "seed \(seed): a departed visit is the same, centre and all")
            } else {
                // Under way: told at its arrival; the history's centre has every fix since.
                #expect(told["arrival"] == computed["arrival"] && told["departure"] == nil, "seed \(seed)")
            }
        }
    }
}
