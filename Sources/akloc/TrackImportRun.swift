import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import AklocTrackImport

/// `akloc track import FILE…`: reads each file with a streaming reader
/// (GPX, Records.json, Timeline.json), sends its points to aklocd in
/// `importTrack` batches, then commits them all at once. The daemon stages
/// until the commit, so a bad file anywhere (or a refused point, or this
/// program stopped) imports nothing at all (docs/track.md, "Importing").
struct TrackImportRun {
    /// Bytes of points per `add` line: the daemon takes lines of up to 64 KiB.
    static let batchBytes = 56 << 10

    let files: [String]
    let connection: DaemonConnection

    /// What the daemon said at the end.
    struct Summary {
        /// Points sent to aklocd.
        var points = 0
        /// Points passed over because they have no time (GPX `trkpt`s
        /// without `<time>`): the daemon never sees them.
        var untimed = 0
        var imported = 0
        var skipped = 0
        var days = 0
    }

    func run() throws(CLIError) -> Summary {
        var summary = Summary()
        // `N points, X MB…` on a terminal while it runs longer than a second.
        var progress = TrackProgress()
        for file in files {
            let (sent, untimed) = try send(file, progress: &progress)
            summary.points += sent
            summary.untimed += untimed
        }
        progress.finish()
        guard summary.points > 0 else {
            let untimed = summary.untimed > 0 ? " (\(summary.untimed) without a time passed over)" : ""
            throw .failure("no track points in \(files.joined(separator: ", "))\(untimed): nothing to import")
        }
        while true {
            let reply = try connection.call(.importTrack(.commit))
            guard case .object(let members) = reply, case .bool(let done)? = members["done"] else {
                throw .failure("aklocd answered importTrack with something that is not its progress")
            }
            if done {
                summary.imported = Int(members["imported"]?.doubleValue ?? 0)
                summary.skipped = Int(members["skipped"]?.doubleValue ?? 0)
                summary.days = Int(members["days"]?.doubleValue ?? 0)
                return summary
            }
        }
    }

    /// Streams one file to the daemon; returns its number of points sent
    /// and of points passed over for having no time.
    private func send(_ file: String, progress: inout TrackProgress) throws(CLIError) -> (sent: Int, untimed: Int) {
        let input: ChunkedFileReader
        do {
            input = try ChunkedFileReader(path: file)
        } catch {
            throw .failure("\(file): \(error)")
        }
        var batch: [ImportPoint] = []
        var offsets: [Int] = []
        var bytes = 0
        var count = 0
        var untimed = 0
        var scratch = JSONWriter(capacity: 128)
        do {
            var reader = try TrackFileReader { () throws(TrackImportError) -> [UInt8]? in
                do {
                    return try input.next()
                } catch {
                    throw TrackImportError(.unreadable, "at byte \(input.offset): cannot read: \(error)")
                }
            }
            while let (point, offset) = try reader.next() {
                scratch = JSONWriter(capacity: 128)
                ClientRequest.writeImportPoint(point, to: &scratch)
                if bytes + scratch.bytes.count + 1 > Self.batchBytes || batch.count == TrackImportRequest.maxPoints {
                    progress.advance(by: batch.count, bytes: input.offset)
                    try flush(&batch, &offsets, file: file)
                    bytes = 0
                }
                batch.append(point)
                offsets.append(offset)
                bytes += scratch.bytes.count + 1
                count += 1
            }
            untimed = reader.untimed
        } catch let error as TrackImportError {
            abort()
            throw .failure("\(file): \(error.message) [\(error.code.rawValue)]; nothing was imported")
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(file): \(error)")
        }
        progress.advance(by: batch.count, bytes: input.offset)
        try flush(&batch, &offsets, file: file)
        return (count, untimed)
    }

    /// Sends the batch; a refused point is shown with its offset in the file.
    private func flush(_ batch: inout [ImportPoint], _ offsets: inout [Int], file: String) throws(CLIError) {
        guard !batch.isEmpty else { return }
        do {
            _ = try connection.call(.importTrack(.add(batch)))
        } catch {
            var message = error.message
            if let index = Self.pointIndex(in: message), offsets.indices.contains(index) {
                message = "\(file): at byte \(offsets[index]): " + message
            }
            throw CLIError(exitCode: error.exitCode, message: message)
        }
        batch.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
    }

    /// Tells the daemon to forget the staged points (closing the connection would too).
    private func abort() {
        _ = try? connection.call(.importTrack(.abort))
    }

    /// The `i` of `"points[i]"` in a refusal.
    static func pointIndex(in message: String) -> Int? {
        guard let start = message.firstRange(of: "\"points[")?.upperBound,
            let end = message[start...].firstIndex(of: "]")
        else { return nil }
        return Int(message[start..<end])
    }
}
