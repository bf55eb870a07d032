import AklocProtocol
import Testing

@Suite struct LineFramerTests {
    private func lines(_ framer: inout LineFramer) -> [LineFramer.Frame] {
        var frames: [LineFramer.Frame] = []
        while let frame = framer.next() { frames.append(frame) }
        return frames
    }

    private func line(_ text: String) -> LineFramer.Frame { .line(Array(text.utf8)) }

    @Test func manyLinesInOneRead() {
        var framer = LineFramer()
        framer.append(contentsOf: Array("a\nbb\n\nccc\n".utf8))
        #expect(lines(&framer) == [line("a"), line("bb"), line(""), line("ccc")])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func lineSplitAcrossReads() {
        var framer = LineFramer()
        for byte in "{\"op\":\"status\"}\nhalf".utf8 {
            framer.append(contentsOf: [byte])
            _ = framer.next().map { #expect($0 == line("{\"op\":\"status\"}")) }
        }
        #expect(framer.next() == nil)
        #expect(framer.pendingByteCount == 4)
        framer.append(contentsOf: Array("way\n".utf8))
        #expect(lines(&framer) == [line("halfway")])
    }

    @Test func crlfIsTolerated() {
        var framer = LineFramer()
        framer.append(contentsOf: Array("one\r\ntwo\r".utf8))
        #expect(lines(&framer) == [line("one")])
        framer.append(contentsOf: Array("\n\r\n".utf8))
        #expect(lines(&framer) == [line("two"), line("")])
    }

    @Test func appendFromRawBuffer() {
        var framer = LineFramer()
        Array("x\ny".utf8).withUnsafeBytes { framer.append($0) }
        #expect(lines(&framer) == [line("x")])
    }

    @Test func exactly64KiBIsAccepted() {
        var framer = LineFramer()
        let payload = [UInt8](repeating: UInt8(ascii: "a"), count: 65_536)
        framer.append(contentsOf: payload)
        #expect(framer.next() == nil)
        framer.append(contentsOf: [0x0D])  // "\r" may still be half of "\r\n"
        #expect(framer.next() == nil)
        framer.append(contentsOf: [0x0A])
        #expect(framer.next() == .line(payload))
    }

    @Test func oneByteOver64KiBIsTooLong() {
        var framer = LineFramer()
        framer.append(contentsOf: [UInt8](repeating: UInt8(ascii: "a"), count: 65_537) + [0x0A])
        #expect(framer.next() == .lineTooLong)
        #expect(framer.next() == nil)
        framer.append(contentsOf: Array("{\"op\":\"status\"}\n".utf8))
        #expect(framer.next() == nil, "input after lineTooLong is discarded")
        #expect(framer.overflowed)
    }

    @Test func overlongLineIsDetectedBeforeItsNewline() {
        var framer = LineFramer()
        framer.append(contentsOf: [UInt8](repeating: UInt8(ascii: "a"), count: 65_537))
        #expect(framer.next() == .lineTooLong)
        #expect(framer.pendingByteCount == 0, "memory is released at once")
    }

    @Test func exactly64KiBWithCRLFAndOverByCR() {
        var framer = LineFramer()
        framer.append(contentsOf: [UInt8](repeating: UInt8(ascii: "a"), count: 65_536) + [0x0D, 0x0D])
        #expect(framer.next() == .lineTooLong)
    }

    @Test func oneMiBLineInSmallReadsStaysBounded() {
        var framer = LineFramer()
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var results: [LineFramer.Frame] = []
        for _ in 0..<256 {
            framer.append(contentsOf: chunk)
            while let frame = framer.next() { results.append(frame) }
            #expect(framer.pendingByteCount <= 65_537 + 4096)
        }
        framer.append(contentsOf: [0x0A])
        #expect(framer.next() == nil)
        #expect(results == [.lineTooLong])
    }

    @Test func manySmallReadsOfLongLinesAreLinear() {
        // 20 lines of 60 000 bytes, fed 7 bytes at a time: rescanning
        // from the line start each time would be ~10^11 byte visits.
        var framer = LineFramer()
        let body = [UInt8](repeating: UInt8(ascii: "y"), count: 60_000) + [0x0A]
        var stream: [UInt8] = []
        for _ in 0..<20 { stream += body }
        var count = 0
        var index = 0
        while index < stream.count {
            let end = min(index + 7, stream.count)
            framer.append(contentsOf: stream[index..<end])
            index = end
            while case .line(let bytes)? = framer.next() {
                #expect(bytes.count == 60_000)
                count += 1
            }
        }
        #expect(count == 20)
    }

    @Test func smallerCap() {
        var framer = LineFramer(maxLineLength: 4)
        framer.append(contentsOf: Array("abcd\nabcde\n".utf8))
        #expect(lines(&framer) == [line("abcd"), .lineTooLong])
    }
}
