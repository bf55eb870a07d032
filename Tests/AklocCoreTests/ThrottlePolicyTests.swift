import AklocCore
import Foundation
import Testing

@Suite struct ThrottlePolicyTests {
    @Test func defaultsAreThoseOfAKLocationManager() throws {
        let policy = ThrottlePolicy()
        #expect(policy.updateSpeed == 0.4)
        #expect(policy.minInterval == 5)
        #expect(policy.maxInterval == 300)
        #expect(policy.distanceFilter == 0)
        #expect(policy.desiredAccuracy == 0)
        #expect(try ThrottlePolicy(minInterval: 5) == policy)
        #expect(policy.isValid)
    }

    @Test(arguments: [
        (-1.0, ThrottlePolicyError.Code.negative), (.nan, .notFinite), (.infinity, .notFinite),
        (-.infinity, .notFinite),
    ])
    func rejectsBadNumbersInEveryMember(value: Double, code: ThrottlePolicyError.Code) {
        let members: [(ThrottlePolicyError.Member, WritableKeyPath<ThrottlePolicy, Double>)] = [
            (.updateSpeed, \.updateSpeed), (.minInterval, \.minInterval), (.maxInterval, \.maxInterval),
            (.distanceFilter, \.distanceFilter), (.desiredAccuracy, \.desiredAccuracy),
        ]
        for (member, keyPath) in members {
            var policy = ThrottlePolicy()
            policy[keyPath: keyPath] = value
            #expect(throws: ThrottlePolicyError.self) { try policy.validate() }
            do {
                try policy.validate()
            } catch {
                #expect(error.code == code)
                #expect(error.member == member)
                #expect(error.message.contains(member.rawValue))
            }
            #expect(!policy.isValid)
        }
    }

    @Test func rejectsMinAboveMax() {
        #expect {
            try ThrottlePolicy(minInterval: 10, maxInterval: 5)
        } throws: { error in
            (error as? ThrottlePolicyError)?.code == .minAboveMax
                && (error as? ThrottlePolicyError)?.message.contains("maxInterval") == true
        }
    }

    @Test func rejectsIntervalsBeyondTheLimit() {
        #expect {
            try ThrottlePolicy(maxInterval: ThrottlePolicy.intervalLimit + 1)
        } throws: { error in
            (error as? ThrottlePolicyError)?.code == .tooLarge
        }
    }

    @Test func zeroIsAllowedEverywhere() throws {
        let policy = try ThrottlePolicy(
            updateSpeed: 0, minInterval: 0, maxInterval: 0, distanceFilter: 0, desiredAccuracy: 0)
        #expect(policy.isValid)
        let equal = try ThrottlePolicy(minInterval: 7, maxInterval: 7)
        #expect(equal.minInterval == equal.maxInterval)
    }

    @Test func decodingFillsOmittedMembersWithDefaults() throws {
        let decoded = try JSONDecoder().decode(ThrottlePolicy.self, from: Data(#"{"minInterval":2}"#.utf8))
        var expected = ThrottlePolicy()
        expected.minInterval = 2
        #expect(decoded == expected)
        #expect(try JSONDecoder().decode(ThrottlePolicy.self, from: Data("{}".utf8)) == ThrottlePolicy())
    }

    @Test func decodingValidates() {
        for json in [#"{"minInterval":-1}"#, #"{"minInterval":400}"#, #"{"distanceFilter":-0.5}"#] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(ThrottlePolicy.self, from: Data(json.utf8))
            }
        }
        do {
            _ = try JSONDecoder().decode(ThrottlePolicy.self, from: Data(#"{"minInterval":400}"#.utf8))
        } catch DecodingError.dataCorrupted(let context) {
            #expect((context.underlyingError as? ThrottlePolicyError)?.code == .minAboveMax)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func roundTrips() throws {
        let policy = try ThrottlePolicy(
            updateSpeed: 1.5, minInterval: 1, maxInterval: 60, distanceFilter: 25, desiredAccuracy: 10)
        let data = try JSONEncoder().encode(policy)
        #expect(try JSONDecoder().decode(ThrottlePolicy.self, from: data) == policy)
    }

    @Test func errorsConvertToBadRequest() {
        let error = ThrottlePolicyError(.negative, .minInterval, "minInterval must not be negative")
        #expect(EngineError(error).code == .badRequest)
        #expect(EngineError(error).message.contains("minInterval"))
        #expect(error.description.contains("negative"))
    }
}
