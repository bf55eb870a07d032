import AklocPosix
import AklocSystemd
import Glibc

/// Edits authorization rules in `akloc.conf` for `akloc authorize`, touching
/// only the one rule line: comments, order and every other line stay as the
/// administrator wrote them.
public enum ConfigWriter {
    /// Keys of `[authorization]` that are settings, not user names.
    static let reservedKeys: Set<String> = ["default", "admin-group"]

    /// Returns `text` with `subject`'s rule set to `rule`: the existing rule
    /// line is rewritten in place, or a new one is appended to the last
    /// `[authorization]` section (which is created if there is none).
    /// Throws if `text` is not a valid config, so a broken file is never
    /// edited into a different broken file.
    public static func setRule(
        subject: AuthorizationSubject, rule: AuthorizationRule, in text: String, path: String
    ) throws(ConfigError) -> String {
        if case .user(let name) = subject, reservedKeys.contains(name) {
            throw ConfigError(
                .badValue, path: path, section: "authorization", key: name,
                message: "expected a user name other than \(reservedKeys.sorted().joined(separator: " or ")), "
                    + "which are settings in [authorization]")
        }
        _ = try ConfigParser.parse(text, path: path)
        let lexed = try ConfigLexer.lines(of: Array(text.utf8), path: path)
        // Split on bytes: as Characters, "\r\n" is one grapheme and would not split.
        var rawLines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        let newLine = "\(subject) = \(rule.rawValue)"

        var section: String?
        var lastAuthorizationHeader: Int?
        var authorizationEnd: Int?  // index after the last line of the last [authorization] section
        for (index, line) in lexed.enumerated() {
            switch line.kind {
            case .section(let name):
                if section == "authorization" { authorizationEnd = index }
                section = name
                if name == "authorization" {
                    lastAuthorizationHeader = index
                    authorizationEnd = nil
                }
            case .assignment(let key, _, _) where section == "authorization" && !reservedKeys.contains(key):
                if AuthorizationSubject(key) == subject {
                    let raw = rawLines[index]
                    let indent = raw.prefix(while: { $0 == " " || $0 == "\t" })
                    rawLines[index] = indent + newLine + (raw.hasSuffix("\r") ? "\r" : "")
                    return rawLines.joined(separator: "\n")
                }
            default:
                break
            }
        }

        let crlf = rawLines.first?.hasSuffix("\r") == true ? "\r" : ""
        guard let header = lastAuthorizationHeader else {
            var result = text
            if !result.isEmpty && result.utf8.last != UInt8(ascii: "\n") { result += crlf + "\n" }
            if !result.isEmpty { result += crlf + "\n" }
            return result + "[authorization]" + crlf + "\n" + newLine + crlf + "\n"
        }
        // Insert after the section's last non-blank line, so the rule joins
        // the section rather than floating above the next header.
        var insertAt = authorizationEnd ?? lexed.count
        while insertAt > header + 1, lexed[insertAt - 1].kind == .blank { insertAt -= 1 }
        rawLines.insert(newLine + crlf, at: insertAt)
        return rawLines.joined(separator: "\n")
    }

    /// Sets a rule in the file at `path` and writes it atomically (temp file
    /// in the same directory, fsync, rename, fsync of the directory), keeping
    /// the file's mode. A missing file is created (mode 0644) with just that
    /// rule. Returns the configuration the new file parses to.
    @discardableResult
    public static func setRule(
        subject: AuthorizationSubject, rule: AuthorizationRule, inFile path: String
    ) throws(ConfigError) -> Configuration {
        var text = ""
        do {
            let bytes = try FileReader.read(path, limit: ConfigParser.maximumFileSize)
            guard bytes.count <= ConfigParser.maximumFileSize else {
                throw ConfigError(.fileTooLarge, path: path, message: "expected a file of at most 1 MiB")
            }
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw ConfigError(.invalidUTF8, path: path, message: "expected UTF-8 text")
            }
            text = decoded
        } catch let error as ConfigError {
            throw error
        } catch let error as Errno where error == .noSuchFile {
            text = ""
        } catch {
            throw ConfigError(.unreadable, path: path, message: "cannot read: \(error)")
        }
        let updated = try setRule(subject: subject, rule: rule, in: text, path: path)
        let configuration = try ConfigParser.parse(updated, path: path)
        do {
            try AtomicFile.write(Array(updated.utf8), to: path, mode: 0o644)
        } catch {
            throw ConfigError(.writeFailed, path: path, message: "cannot write: \(error)")
        }
        return configuration
    }
}
