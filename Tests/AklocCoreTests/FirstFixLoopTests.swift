import AklocCore
import Testing

@Suite struct FirstFixLoopTests {
    @Test func succeedsAtOnceWithAFreshFix() {
        var loop = FirstFixLoop(attempts: 5)
        #expect(loop.begin(hasFreshFix: true, at: .zero) == .succeeded)
        #expect(loop.nextAttempt == nil)
        #expect(loop.attempt(hasFreshFix: true, at: .seconds(1)) == nil)
    }

    @Test func reportsTheErrorOnceAfterTheLastAttemptThenStillAnnouncesALateFix() {
        var loop = FirstFixLoop(attempts: 5)
        var outcomes: [FirstFixLoop.Outcome?] = [loop.begin(hasFreshFix: false, at: .zero)]
        while let due = loop.nextAttempt {
            outcomes.append(loop.attempt(hasFreshFix: false, at: due))
        }
        #expect(outcomes == [nil, nil, nil, nil, .cantDetectFirstLocation])
        #expect(loop.failures == 5)
        #expect(loop.errorReported)
        #expect(loop.fixArrived() == .succeeded)
        #expect(loop.fixArrived() == nil)
    }

    @Test func attemptsAreOneSecondApart() {
        var loop = FirstFixLoop(attempts: 3)
        _ = loop.begin(hasFreshFix: false, at: .seconds(10))
        #expect(loop.nextAttempt == .seconds(11))
        _ = loop.attempt(hasFreshFix: false, at: .seconds(11))
        #expect(loop.nextAttempt == .seconds(12))
        #expect(loop.attempt(hasFreshFix: true, at: .seconds(12)) == .succeeded)
    }

    @Test func attemptsBelowOneAreRejectedByTheConfiguration() {
        for attempts in [0, -1, Int.min] {
            #expect {
                try Engine.Configuration(firstLocationAttempts: attempts).validate()
            } throws: { error in
                (error as? EngineConfigurationError)?.code == .invalidFirstLocationAttempts
            }
            #expect(FirstFixLoop(attempts: attempts).attempts == 1)
        }
        #expect(throws: Never.self) { try Engine.Configuration(firstLocationAttempts: 1).validate() }
    }

    @Test func configurationRejectsBadFixAgesAndPolicies() {
        for age in [0, -1, Double.nan, .infinity] {
            #expect {
                try Engine.Configuration(maxFixAge: age).validate()
            } throws: { error in
                (error as? EngineConfigurationError)?.code == .invalidMaxFixAge
            }
        }
        var policy = ThrottlePolicy()
        policy.minInterval = -3
        #expect {
            try Engine.Configuration(defaultPolicy: policy).validate()
        } throws: { error in
            (error as? EngineConfigurationError)?.code == .invalidDefaultPolicy
        }
    }
}
