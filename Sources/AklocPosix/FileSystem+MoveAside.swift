import Glibc

extension FileSystem {
    /// Renames a bad `file` to `<file>.corrupt-<UTC time>` (never over an
    /// earlier casualty) and syncs `directory`; returns the new path. The
    /// saved places' store moves its bad files the same way.
    public static func moveAside(_ file: String, in directory: String, now: time_t) throws(StateStoreError) -> String {
        var stamp = now
        var parts = tm()
        gmtime_r(&stamp, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let base =
            "\(file).corrupt-\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
            + "T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
        var candidate = base
        var suffix = 1
        // Never overwrite an earlier casualty.
        while (try? FileSystem.status(candidate)) != nil {
            candidate = "\(base).\(suffix)"
            suffix += 1
        }
        do {
            try FileSystem.rename(file, to: candidate)
            try FileSystem.syncDirectory(directory)
        } catch {
            throw StateStoreError(
                .moveAsideFailed, path: file, "cannot move the bad file \(file) to \(candidate): \(error)", errno: error
            )
        }
        return candidate
    }
}
