import AklocJSON
import Testing

private func validate(_ text: String) -> Result<JSONOutline, JSONParseError> { JSONValue.validate(Array(text.utf8)) }

@Suite struct JSONValidateTests {
    @Test func aGPSDLineHasItsClass() throws {
        let line = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":52.5,"lon":13.4,"track":"\u00e9"}"#
        let outline = try validate(line).get()
        #expect(outline == JSONOutline(kind: .object, firstKey: "class", firstString: "TPV"))
    }

    @Test func theFirstMemberIsReportedOnlyWhenItIsAString() throws {
        #expect(try validate(#"{"mode":3,"class":"TPV"}"#).get() == JSONOutline(kind: .object, firstKey: "mode"))
        #expect(try validate(#"{}"#).get() == JSONOutline(kind: .object))
        #expect(try validate(#"[{"class":"TPV"}]"#).get() == JSONOutline(kind: .array))
        #expect(try validate(#" "x" "#).get() == JSONOutline(kind: .string))
        #expect(try validate("-1.5e3").get() == JSONOutline(kind: .number))
        #expect(
            try validate(#"{"a\"b":"c\nd"}"#).get() == JSONOutline(kind: .object, firstKey: "a\"b", firstString: "c\nd")
        )
    }

    /// The validator must accept exactly what the parser accepts, with the same error.
    @Test(
        arguments: malformedTexts + [
            #"{"class":"TPV","lat":52.5}"#, #"{"class":"TPV","lat":}"#, #"{"class":"TPV""#,
            #"[1,{"a":[true,false,null]}]"#,
            "123456789012345678901234567890", "1e308", "\"\\ud83d\\ude00\"",
        ])
    func agreesWithTheParser(text: String) {
        let bytes = Array(text.utf8)
        switch (JSONValue.parse(bytes), JSONValue.validate(bytes)) {
        case (.success, .success): break
        case (.failure(let parsed), .failure(let validated)): #expect(parsed == validated)
        case (let parsed, let validated):
            Issue.record("parse \(parsed), validate \(validated) for \(text.debugDescription)")
        }
    }

    /// Without its first member (a caller that read the class from the
    /// bytes): the same texts pass with the same errors, and no key is made.
    @Test(
        arguments: malformedTexts + [
            #"{"class":"TPV","lat":52.5}"#, #"{"class":"TPV","lat":}"#, #"{"class":"TPV""#,
            #"{"class":"T\u00e9V","x":"\ud83d\ude00"}"#, #"{"class":"TPV"}"# + "\u{1}",
        ])
    func withoutTheFirstMemberAgreesWithTheParser(text: String) {
        let bytes = Array(text.utf8)
        switch (JSONValue.parse(bytes), JSONValue.validate(bytes, firstMember: false)) {
        case (.success, .success(let outline)): #expect(outline.firstKey == nil && outline.firstString == nil)
        case (.failure(let parsed), .failure(let validated)): #expect(parsed == validated)
        case (let parsed, let validated):
            Issue.record("parse \(parsed), validate \(validated) for \(text.debugDescription)")
        }
    }

    @Test func invalidUTF8GetsTheParsersError() {
        let bytes: [UInt8] = Array(#"{"class":"T"#.utf8) + [0xC3, 0x28] + Array(#"V"}"#.utf8)
        guard case .failure(let parsed) = JSONValue.parse(bytes) else {
            Issue.record("parsed")
            return
        }
        #expect(JSONValue.validate(bytes) == .failure(parsed))
        #expect(
            JSONValue.validate([0x7B, 0xFF, 0x7D])
                == JSONValue.parse([0x7B, 0xFF, 0x7D]).map { _ in JSONOutline(kind: .null) })
    }

    @Test func everyTruncationIsRejected() {
        let text = Array(#"{"class":"SKY","satellites":[{"PRN":7,"el":-1.5e1,"used":false}],"x":"\u20ac"}"#.utf8)
        for end in 0..<text.count {
            if case .success = JSONValue.validate(text[0..<end]) { Issue.record("accepted the first \(end) bytes") }
        }
        #expect((try? JSONValue.validate(text).get())?.firstString == "SKY")
    }

    @Test func deepNestingIsRefused() {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect((try? JSONValue.validate(deep).get()) == nil)
    }
}
