import AklocJSON
import Testing

@Suite struct JSONWriterTests {
    @Test func stringsAreEscapedAndReadBack() throws {
        let texts = ["", "plain", "quote\" backslash\\ slash/", "\u{0}\u{1}\u{1F}\t\n\r\u{8}\u{C}", "é€😀", "\u{7F}"]
        for text in texts {
            var writer = JSONWriter()
            writer.string(text)
            #expect(try JSONValue.parse(writer.bytes).get() == .string(text))
        }
        var writer = JSONWriter()
        writer.string("a\u{1}\"")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""a\u0001\"""#)
    }

    @Test func numbersReadBackAsTheSameValue() throws {
        for value in [0.1, 5.0, -0.0, 1e-7, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 52.520_008] {
            var writer = JSONWriter()
            writer.number(value)
            #expect(try JSONValue.parse(writer.bytes).get() == .double(value))
        }
        for value in [Int64.min, -1, 0, 9, 10, Int64.max] {
            var writer = JSONWriter()
            writer.integer(value)
            #expect(try JSONValue.parse(writer.bytes).get() == .int(value))
        }
    }

    @Test func nonFiniteNumbersBecomeNull() {
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = JSONWriter()
            writer.number(value)
            #expect(writer.bytes == Array("null".utf8))
        }
    }

    @Test func valuesRoundTripWithSortedKeys() throws {
        let value: JSONValue = ["b": [1, 2.5, "x", nil, true], "a": ["nested": ["deep": false]], "": ""]
        #expect(value.jsonString == #"{"":"","a":{"nested":{"deep":false}},"b":[1,2.5,"x",null,true]}"#)
        #expect(try JSONValue.parse(value.jsonBytes).get() == value)
    }
}
