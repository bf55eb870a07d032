import AklocJSON
import Testing

private func parse(_ text: String) -> Result<JSONValue, JSONParseError> { JSONValue.parse(Array(text.utf8)) }

private func parses(_ bytes: [UInt8]) -> Bool {
    if case .success = JSONValue.parse(bytes) { return true }
    return false
}

/// Texts RFC 8259 rejects, each for one reason.
let malformedTexts: [String] = [
    "", " ", "{", "}", "[", "[1,]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{1:2}", "[1 2]", "01", "-", "1.",
    ".5", "1e", "1e+", "+1", "NaN", "Infinity", "-Infinity", "tru", "nul", "falsey", "\"abc", "\"\\x\"",
    "\"\\u12\"", "\"\\u12G4\"", "\"\\uD800\"", "\"\\uDC00\"", "\"\\uD800\\u0041\"", "\"a\tb\"", "// c\n1",
    "/* c */ 1", "1 2", "{} {}", "'a'", "[1]x", "1e999", "-1e999", String(repeating: "9", count: 400),
]

@Suite struct JSONParserTests {
    @Test func valuesKeepTheirTypes() throws {
        let value = try parse(#" {"i":-12,"d":0.5,"e":1e3,"s":"x\u00e9\n","b":true,"n":null,"a":[1,[]],"o":{}} "#).get()
        #expect(value["i"] == .int(-12))
        #expect(value["d"] == .double(0.5))
        #expect(value["e"] == .double(1000))
        #expect(value["s"] == .string("x\u{e9}\n"))
        #expect(value["b"] == .bool(true))
        #expect(value["n"] == .null)
        #expect(value["a"] == .array([.int(1), .array([])]))
        #expect(value["o"] == .object([:]))
    }

    @Test func integersPastInt64BecomeDoubles() throws {
        #expect(try parse("9223372036854775807").get() == .int(.max))
        #expect(try parse("9223372036854775808").get() == .double(9_223_372_036_854_775_808))
    }

    @Test func surrogatePairsJoin() throws {
        #expect(try parse(#""\ud83d\ude00""#).get() == .string("\u{1F600}"))
    }

    @Test(arguments: malformedTexts)
    func malformedTextIsRejected(text: String) {
        #expect(!parses(Array(text.utf8)), "accepted \(text.debugDescription)")
    }

    @Test(
        arguments: [
            [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
            [0x22, 0xFF, 0x22], [0xC3, 0xA9],
        ] as [[UInt8]])
    func invalidUTF8IsRejected(bytes: [UInt8]) {
        #expect(!parses(bytes))
    }

    @Test func everyTruncationOfAValidTextIsRejected() {
        let text = Array(#"{"class":"TPV","lat":52.5,"tag":"\u00e9\"x","sky":[{"PRN":1,"used":true}],"n":null}"#.utf8)
        #expect(parses(text))
        for end in 0..<text.count {
            #expect(!parses(Array(text[0..<end])), "accepted the first \(end) bytes")
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(!parses(Array(deep.utf8)))
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(parses(Array(ok.utf8)))
        #expect(!parses(Array(("[" + ok + "]").utf8)))
    }

    @Test func errorsSayWhere() {
        guard case .failure(let error) = parse(#"{"a":tru}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(error.offset == 5)
        #expect(error.description == "invalid literal at byte 5")
    }

    @Test func aLargeTextParses() throws {
        let members = (0..<20_000).map { "\"k\($0)\":[\($0),\"\(String(repeating: "v", count: 40))\"]" }
        let text = "{" + members.joined(separator: ",") + "}"
        let value = try parse(text).get()
        #expect(value.objectValue?.count == 20_000)
        #expect(value["k19999"] == .array([.int(19_999), .string(String(repeating: "v", count: 40))]))
    }

    @Test func duplicateKeysKeepTheLast() throws {
        #expect(try parse(#"{"a":1,"a":2}"#).get()["a"] == .int(2))
    }
}
