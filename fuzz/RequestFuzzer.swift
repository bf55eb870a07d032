// libFuzzer entry for the request path a client controls: bytes -> LineFramer
// -> ClientRequest.decode -> reply encoding, plus the client-side decoders.
// Built by fuzz/run.sh with `swiftc -sanitize=fuzzer,address`.
//
// Besides "no crash, no memory error", it checks invariants and traps when
// one breaks (libFuzzer then saves the input as a crash):
// - a decoded request re-encodes to a line that decodes to the same request;
// - every error reply is one line that decodes as a reply carrying the
//   request's id;
// - any parsed JSON value writes back to text that parses to the same value;
// - the framer never returns a line over its cap or containing "\n".

import AklocCore
import AklocJSON
import AklocProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func requestFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)

    // The whole input as one line.
    check(line: input)

    // The input as a stream in chunks whose sizes come from the first byte,
    // through a framer with a small cap so overflow is reached too.
    let chunk = size > 0 ? Int(input[0] % 17) + 1 : 1
    let cap = size > 1 ? Int(input[1]) * 4 + 1 : 64
    var framer = LineFramer(maxLineLength: cap)
    var offset = 0
    var sawTooLong = false
    while offset < size {
        let end = min(offset + chunk, size)
        let piece = UnsafeBufferPointer(rebasing: input[offset..<end])
        if offset % 2 == 0 {
            framer.append(UnsafeRawBufferPointer(piece))
        } else {
            framer.append(contentsOf: piece)
        }
        offset = end
        while let frame = framer.next() {
            switch frame {
            case .line(let line):
                guard !sawTooLong, line.count <= cap, !line.contains(0x0A) else {
                    fatalError("framer broke its contract")
                }
                check(line: line)
            case .lineTooLong:
                guard !sawTooLong else { fatalError("lineTooLong twice") }
                sawTooLong = true
            }
        }
    }
    return 0
}

private func check<Bytes: Collection<UInt8>>(line: Bytes) {
    switch ClientRequest.decode(line) {
    case .success(let request):
        let encoded = request.encodedLine()
        guard encoded.last == 0x0A, encoded.firstIndex(of: 0x0A) == encoded.count - 1,
            case .success(let again) = ClientRequest.decode(encoded.dropLast()), again == request
        else { fatalError("request did not round-trip: \(request)") }
    case .failure(let error):
        let reply = ServerEncoder.reply(error: error)
        guard reply.last == 0x0A, reply.firstIndex(of: 0x0A) == reply.count - 1,
            case .success(.reply(let id, .failure(let decoded))) = ServerEvent.decode(reply.dropLast()),
            id == error.id, decoded.code == error.code, decoded.message == error.message
        else { fatalError("error reply did not round-trip: \(error)") }
    }
    if case .success(let value) = JSONValue.parse(line) {
        guard case .success(let again) = JSONValue.parse(value.jsonBytes), again == value else {
            fatalError("JSON value did not round-trip: \(value)")
        }
    }
    _ = ServerEvent.decode(line)
}
