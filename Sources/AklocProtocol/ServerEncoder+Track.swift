import AklocCore
import AklocJSON

extension ServerEncoder {
    /// A `track` reply, `{"id":…,"ok":true,"result":{"points":[…],"next":…}}`,
    /// holding as many of `points` as fit in `byteBudget` (a reply must stay
    /// under a client's hard limit). When all fit, `next` is the page's own
    /// continuation; when the budget stops it, `next` is `cursorAfter(i)`,
    /// the cursor after `points[i]`, the last one written.
    public static func trackReply(
        id: RequestID?, points: [TrackPoint], next: String?, byteBudget: Int, cursorAfter: (Int) -> String
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: min(byteBudget, points.count * 200 + 256))
        writeReplyHead(id: id, to: &writer)
        writer.raw("{\"points\":[")
        var next = next
        for (index, point) in points.enumerated() {
            if index > 0 {
                // A point is at most a few hundred bytes; keep a margin for the longest.
                if writer.bytes.count + 1024 > byteBudget {
                    next = cursorAfter(index - 1)
                    break
                }
                writer.byte(UInt8(ascii: ","))
            }
            TrackPage.write(point, to: &writer)
        }
        writer.raw("],\"next\":")
        if let next { writer.string(next) } else { writer.raw("null") }
        writer.raw("}}\n")
        return writer.bytes
    }
}
