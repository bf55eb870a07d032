import Testing

@testable import AklocGPSD

@Suite struct GPSDLineTests {
    func check(_ text: String) -> GPSDLine.Verdict { GPSDLine.check(Array(text.utf8)) }

    @Test func acceptsGPSDMessages() {
        #expect(
            check(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r")
                == .message(className: "VERSION"))
        #expect(
            check(
                #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-11-22T09:53:10.801Z","lat":-27.210713333,"#
                    + #""lon":153.052005000,"altHAE":45.2000,"eps":4.0e-1,"ok":true,"n":null}"#)
                == .message(className: "TPV"))
        #expect(
            check(#"{"class":"SKY","satellites":[{"PRN":1,"used":false},{"PRN":2,"used":true}],"s":"\u00e9\n"}"#)
                == .message(className: "SKY"))
        #expect(check(#"{"class":"DEVICES","devices":[]}"#) == .message(className: "DEVICES"))
    }

    @Test(arguments: [
        "hello garbage",
        #"{"class":"TPV","mode":3,"lat":51.1,"lon":5.1"#,
        #"{"class":"TPV","mode":3,"lat":51.1,"lon":5.1}}"#,
        #"{"class":"TPV","mode":3,"lat":51.1,"lon":5.1} trailing"#,
        #"{"class":"TPV","mode":03}"#,
        #"{"class":"TPV","mode":3.}"#,
        #"{"class":"TPV","mode":NaN}"#,
        #"{"class":"TPV","s":"\x"}"#,
        #"{"class":"TPV","s":"\u12"}"#,
        #"{"class":"TPV",}"#,
        #"{"mode":3,"class":"TPV"}"#,
        #"["class","TPV"]"#,
        "",
        "\r",
        String(repeating: "[", count: 40),
    ])
    func rejects(text: String) {
        if case .message = check(text) { Issue.record("accepted \(text.debugDescription)") }
    }

    @Test func rejectsInvalidUTF8AndControlBytes() {
        var bytes = Array(#"{"class":"TPV","device":"x"}"#.utf8)
        bytes.insert(0xFF, at: 25)
        #expect(GPSDLine.check(bytes) == .invalid(reason: "invalid UTF-8"))
        var control = Array(#"{"class":"TPV","device":"x"}"#.utf8)
        control.insert(0x01, at: 25)
        if case .message = GPSDLine.check(control) { Issue.record("accepted a raw control byte in a string") }
    }

    /// The source's check of a line whose class it read from the opening
    /// bytes gives exactly the full check's verdict.
    @Test(arguments: [
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":-27.2,"lon":153.0,"eps":4.0e-1,"ok":true,"n":null}"#,
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r",
        #"{"class":"ERROR","message":"unrecognized request"}"#,
        #"{"class":"TPV","s":"\u00e9","t":"€"}"#,
        #"{"class":"TPV","mode":3,"lat":51.1,"lon":5.1"#,
        #"{"class":"TPV","mode":3,"lat":51.1,"lon":5.1}}"#,
        #"{"class":"TPV","mode":3} trailing"#,
        #"{"class":"TPV","mode":03}"#,
        #"{"class":"TPV","mode":NaN}"#,
        #"{"class":"TPV","s":"\x"}"#,
        #"{"class":"TPV",}"#,
        #"{"class":"TPV"}"#,
        #"{"class":"TPV""#,
        #"{"class":"TPV"]"#,
        #"{"class":"TPV","deep":"# + String(repeating: "[", count: 40),
    ])
    func checkOfAKnownClassMatchesTheFullCheck(text: String) throws {
        let bytes = Array(text.utf8)
        let name = try #require(GPSDLine.leadingClass(bytes))
        #expect(GPSDLine.check(bytes, leadingClass: name) == GPSDLine.check(bytes), "\(text)")
    }

    @Test func checkOfAKnownClassRejectsBadBytes() {
        var bytes = Array(#"{"class":"TPV","device":"x"}"#.utf8)
        bytes.insert(0xFF, at: 25)
        #expect(GPSDLine.check(bytes, leadingClass: "TPV") == .invalid(reason: "invalid UTF-8"))
        var control = Array(#"{"class":"TPV","device":"x"}"#.utf8)
        control.insert(0x01, at: 25)
        #expect(GPSDLine.check(control, leadingClass: "TPV") == GPSDLine.check(control))
        if case .message = GPSDLine.check(control, leadingClass: "TPV") { Issue.record("accepted a control byte") }
    }

    /// What the source uses to skip the second check of lines it does not read.
    @Test func leadingClassReadsOnlyTheOpeningBytes() {
        #expect(GPSDLine.leadingClass(Array(#"{"class":"SKY","satellites":[{"PRN":7}]}"#.utf8)) == "SKY")
        #expect(GPSDLine.leadingClass(Array(#"{"class":"TPV","mode":3"#.utf8)) == "TPV")
        // Garbage and near misses do not name a class, so they get the full check.
        for line in [
            "this is not gpsd", #"{"class":"#, #"{"class":"SKY"#, #"{"class":"","x":1}"#,
            #"{ "class":"SKY"}"#, #"{"class":"S K"}"#, #"{"class":"ABCDEFGHIJKLMNOPQ"}"#, "",
        ] {
            #expect(GPSDLine.leadingClass(Array(line.utf8)) == nil, "\(line)")
        }
    }
}
