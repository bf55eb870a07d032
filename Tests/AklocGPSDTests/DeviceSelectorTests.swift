import AklocCore
import AklocGPSD
import Testing

@Suite struct DeviceSelectorTests {
    func fix(
        _ device: String?, _ mode: Location.Mode = .threeD, error: Double? = nil, second: Int64
    ) -> Location {
        Location(
            latitude: 52, longitude: 5, mode: mode, horizontalAccuracy: error,
            timestamp: FixTime(secondsSince1970: 1_700_000_000 + second), device: device)
    }

    @Test func everyTPVOfTheDevicePassesEpochsAreTheEngines() {
        var selector = DeviceSelector()
        let first = fix("/dev/a", second: 1)
        #expect(selector.offer(first, at: .seconds(1)) == first)
        // gpsd's second TPV of the epoch, with the receiver's speed: the
        // engine merges it, so it must not be dropped here.
        var again = first
        again.speed = 3
        #expect(selector.offer(again, at: .seconds(1.1)) == again)
        let next = fix("/dev/a", second: 2)
        #expect(selector.offer(next, at: .seconds(2)) == next)
    }

    @Test func fixesWithoutTimeAreNotDeduplicated() {
        var selector = DeviceSelector()
        let untimed = Location(latitude: 1, longitude: 2, device: "/dev/a")
        do {
            let result = selector.offer(untimed, at: .seconds(1))
            #expect(result == untimed)
        }
        do {
            let result = selector.offer(untimed, at: .seconds(2))
            #expect(result == untimed)
        }
    }

    @Test func threeDBeatsTwoD() {
        var selector = DeviceSelector()
        do {
            let result = selector.offer(fix("/dev/a", .threeD, error: 50, second: 1), at: .seconds(1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix("/dev/b", .twoD, error: 2, second: 1), at: .seconds(1.2))
            #expect(result == nil)
        }
        do {
            let result = selector.offer(fix("/dev/a", .threeD, error: 50, second: 2), at: .seconds(2))
            #expect(result != nil)
        }
    }

    @Test func betterAccuracyWinsAtEqualMode() {
        var selector = DeviceSelector()
        do {
            let result = selector.offer(fix("/dev/a", error: 10, second: 1), at: .seconds(1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix("/dev/b", error: 3, second: 1), at: .seconds(1.1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix("/dev/a", error: 10, second: 2), at: .seconds(2))
            #expect(result == nil)
        }
        // Unknown accuracy counts as worst.
        do {
            let result = selector.offer(fix("/dev/c", error: nil, second: 2), at: .seconds(2.1))
            #expect(result == nil)
        }
    }

    @Test func tieKeepsTheDeviceThatPassedLast() {
        var selector = DeviceSelector()
        do {
            let result = selector.offer(fix("/dev/a", error: 5, second: 1), at: .seconds(1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix("/dev/b", error: 5, second: 1), at: .seconds(1.1))
            #expect(result == nil)
        }
        do {
            let result = selector.offer(fix("/dev/a", error: 5, second: 2), at: .seconds(2))
            #expect(result != nil)
        }
    }

    @Test func staleFixOfTheBetterDeviceNoLongerCounts() {
        var selector = DeviceSelector()
        do {
            let result = selector.offer(fix("/dev/a", error: 1, second: 1), at: .seconds(1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix("/dev/b", error: 9, second: 2), at: .seconds(2.9))
            #expect(result == nil)
        }
        // /dev/a's fix was received 2.1 s ago: no longer current.
        do {
            let result = selector.offer(fix("/dev/b", error: 9, second: 3), at: .seconds(3.1))
            #expect(result != nil)
        }
    }

    @Test func pinnedDevicePassesOnlyThatDevice() {
        var selector = DeviceSelector(pinnedDevice: "/dev/b")
        do {
            let result = selector.offer(fix("/dev/a", error: 1, second: 1), at: .seconds(1))
            #expect(result == nil)
        }
        do {
            let result = selector.offer(fix("/dev/b", .twoD, error: 90, second: 1), at: .seconds(1.1))
            #expect(result != nil)
        }
        do {
            let result = selector.offer(fix(nil, second: 2), at: .seconds(2))
            #expect(result == nil)
        }
        do {
            let result = selector.offerNoFix(device: "/dev/a", at: .seconds(2))
            #expect(result == false)
        }
        do {
            let result = selector.offerNoFix(device: "/dev/b", at: .seconds(2))
            #expect(result == true)
        }
    }

    @Test func noFixPassesOnlyWithoutAnotherCurrentFix() {
        var selector = DeviceSelector()
        do {
            let result = selector.offerNoFix(device: "/dev/a", at: .seconds(0))
            #expect(result)
        }
        do {
            let result = selector.offer(fix("/dev/a", second: 1), at: .seconds(1))
            #expect(result != nil)
        }
        do {
            let result = selector.offerNoFix(device: "/dev/b", at: .seconds(1.5))
            #expect(result == false)
        }
        do {
            let result = selector.offerNoFix(device: "/dev/b", at: .seconds(3.5))
            #expect(result == true)
        }
        // A device losing its own fix is passed on, and its old fix stops counting.
        do {
            let result = selector.offer(fix("/dev/a", second: 4), at: .seconds(4))
            #expect(result != nil)
        }
        do {
            let result = selector.offerNoFix(device: "/dev/a", at: .seconds(4.5))
            #expect(result == true)
        }
        do {
            let result = selector.offer(fix("/dev/b", .twoD, second: 5), at: .seconds(4.6))
            #expect(result != nil)
        }
    }

    @Test func resetForgetsEpochsAndDevices() {
        var selector = DeviceSelector()
        let location = fix("/dev/a", second: 1)
        do {
            let result = selector.offer(location, at: .seconds(1))
            #expect(result != nil)
        }
        selector.reset()
        do {
            let result = selector.offer(location, at: .seconds(1.5))
            #expect(result != nil)
        }
    }
}
