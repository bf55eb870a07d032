import AklocCore

/// Why a configuration file was rejected. `code` is stable (tests and logs
/// match on it); `description` is the message an administrator sees, in the
/// `file:line:` form editors and compilers use, e.g.
/// `/etc/akloc/akloc.conf:12: [throttle] min-interval: expected a number of seconds >= 0, got "fast"`.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, CodedErrorCode {
        /// A file named with `--config` does not exist.
        case fileNotFound
        /// The file exists but cannot be read (permissions, a directory, ...).
        case unreadable
        /// Larger than `ConfigParser.maximumFileSize`.
        case fileTooLarge
        case invalidUTF8
        /// A control character (other than tab) or NUL byte.
        case invalidCharacter
        /// A line that is neither a section header, `key = value`, a comment nor blank.
        case syntax
        /// `[gpsd` or `[gpsd] junk`.
        case badSectionHeader
        case unknownSection
        /// `key = value` before any `[section]`.
        case keyOutsideSection
        case unknownKey
        case duplicateKey
        /// The value has the wrong type, is out of range, or is badly quoted.
        case badValue
        /// Valid values that contradict each other (min-interval > max-interval).
        case conflictingValues
        /// `ConfigWriter` could not write the file.
        case writeFailed
    }

    public var code: Code
    public var path: String
    /// 1-based; nil for problems with the file as a whole.
    public var line: Int?
    public var section: String?
    public var key: String?
    /// What was expected and what was found.
    public var message: String

    public init(
        _ code: Code, path: String, line: Int? = nil, section: String? = nil, key: String? = nil, message: String
    ) {
        self.code = code
        self.path = path
        self.line = line
        self.section = section
        self.key = key
        self.message = message
    }

    /// Where, then the message and code as every `CodedError` prints them:
    /// `path:line: [section] key: message [code]`.
    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": "
        if let section { text += "[\(section)] " }
        if let key { text += "\(key): " }
        return text + CodedError(code, message).description
    }
}
