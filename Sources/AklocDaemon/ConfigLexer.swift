/// Splits INI text into classified lines. Shared by `ConfigParser` and
/// `ConfigWriter`, so the writer edits exactly what the parser reads.
enum ConfigLexer {
    struct Line: Sendable {
        enum Kind: Sendable, Equatable {
            case blank
            case comment
            case section(String)
            /// `value` has surrounding double quotes removed; `quoted` says
            /// there were some (quotes are how a value keeps inner spaces).
            case assignment(key: String, value: String, quoted: Bool)
        }

        var number: Int
        var kind: Kind
        /// The line as written, without its newline.
        var text: String
    }

    /// Classifies every line, or throws for the first that is malformed.
    /// Sections and keys are not checked against what akloc knows here.
    static func lines(of bytes: [UInt8], path: String) throws(ConfigError) -> [Line] {
        var result: [Line] = []
        var number = 0
        for var raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if raw.last == UInt8(ascii: "\r") { raw = raw.dropLast() }
            if let bad = raw.first(where: { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }) {
                throw ConfigError(
                    .invalidCharacter, path: path, line: number,
                    message: "expected text, got control character 0x\(String(bad, radix: 16, uppercase: true))")
            }
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw ConfigError(
                    .invalidUTF8, path: path, line: number, message: "expected UTF-8 text, got invalid bytes")
            }
            result.append(Line(number: number, kind: try classify(text, path: path, number: number), text: text))
        }
        // A final newline does not start another line.
        if bytes.last == UInt8(ascii: "\n") { result.removeLast() }
        return result
    }

    private static func classify(_ text: String, path: String, number: Int) throws(ConfigError) -> Line.Kind {
        let trimmed = trim(text)
        if trimmed.isEmpty { return .blank }
        if trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { return .comment }
        if trimmed.hasPrefix("[") {
            guard trimmed.hasSuffix("]"), trimmed.count >= 2 else {
                throw ConfigError(
                    .badSectionHeader, path: path, line: number,
                    message: "expected a section header \"[name]\", got \"\(trimmed)\"")
            }
            let name = trim(String(trimmed.dropFirst().dropLast()))
            guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
                throw ConfigError(
                    .badSectionHeader, path: path, line: number,
                    message: "expected a section header \"[name]\", got \"\(trimmed)\"")
            }
            return .section(name)
        }
        guard let equals = trimmed.firstIndex(of: "=") else {
            throw ConfigError(
                .syntax, path: path, line: number,
                message: "expected \"key = value\", a [section], or a comment, got \"\(trimmed)\"")
        }
        let key = trim(String(trimmed[..<equals]))
        guard !key.isEmpty else {
            throw ConfigError(
                .syntax, path: path, line: number, message: "expected a key before \"=\", got \"\(trimmed)\"")
        }
        var value = trim(String(trimmed[trimmed.index(after: equals)...]))
        let quoted = value.hasPrefix("\"")
        if quoted {
            guard value.count >= 2, value.hasSuffix("\"") else {
                throw ConfigError(
                    .badValue, path: path, line: number, key: key,
                    message: "expected a closing double quote, got \(value)")
            }
            value = String(value.dropFirst().dropLast())
        }
        return .assignment(key: key, value: value, quoted: quoted)
    }

    static func trim(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return String(text[first...last])
    }
}
