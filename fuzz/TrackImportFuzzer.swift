// libFuzzer entry for the track import readers (AklocTrackImport): the
// bytes of a file a user imports -> TrackFileReader, in chunks and with a
// record limit chosen by the first two bytes, so every token and record
// edge falls across a chunk and the size limit is reached too.
// Built by fuzz/run.sh with `swiftc -sanitize=fuzzer,address`.
//
// Besides "no crash, no memory error, no endless loop", it traps when an
// invariant breaks: every point handed out is one the daemon accepts
// (`ImportPoint.problem()` is nil), its offset is inside the file, and
// every refusal names a byte offset inside the file (or just past it, for
// a file cut off).

import AklocCore
import AklocProtocol
import AklocTrackImport

@_cdecl("LLVMFuzzerTestOneInput")
public func trackImportFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let chunk = size > 0 ? Int(bytes[0] % 13) + 1 : 1
    let limit = size > 1 ? Int(bytes[1]) * 8 + 16 : 4096
    do {
        var reader = try TrackFileReader(bytes: bytes, chunkSize: chunk, maxRecordBytes: limit)
        while let (point, offset) = try reader.next() {
            precondition(point.problem() == nil, "a point the daemon refuses: \(point)")
            precondition(offset >= 0 && offset < size, "a point's offset \(offset) outside \(size) bytes")
        }
    } catch {
        let message = error.message
        precondition(message.hasPrefix("at byte "), "a refusal without its offset: \(message)")
        let digits = message.dropFirst(8).prefix { $0.isNumber }
        guard let offset = Int(digits) else { preconditionFailure("a refusal without its offset: \(message)") }
        precondition(offset >= 0 && offset <= size, "a refusal at byte \(offset) of \(size): \(message)")
    }
    return 0
}
