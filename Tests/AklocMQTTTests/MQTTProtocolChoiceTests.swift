import AklocMQTT
import Testing

/// `protocol = auto` falls back to 3.1.1 per node, once; a pinned version never changes.
@Suite struct MQTTProtocolChoiceTests {
    @Test func autoOffersFiveAndFallsBackPerNodeOnce() {
        var choice = MQTTProtocolChoice(.auto)
        #expect(choice.version(forNode: 0) == .v5)
        #expect(choice.version(forNode: 1) == .v5)
        let fellBack = choice.unsupported(node: 1)
        #expect(fellBack)
        #expect(choice.version(forNode: 1) == .v311)
        #expect(choice.version(forNode: 0) == .v5, "the other node still speaks 5")
        let again = choice.unsupported(node: 1)
        #expect(!again, "a 3.1.1 refusal is an ordinary failure")
    }

    @Test(arguments: [MQTTProtocolChoice.Setting.v5, .v311])
    func aPinnedVersionNeverFallsBack(setting: MQTTProtocolChoice.Setting) {
        var choice = MQTTProtocolChoice(setting)
        let pinned = choice.version(forNode: 0)
        #expect(pinned.rawValue == setting.rawValue)
        let fellBack = choice.unsupported(node: 0)
        #expect(!fellBack)
        #expect(choice.version(forNode: 0) == pinned)
    }
}
