import AklocCore
import AklocGeo
import AklocJSON

/// A request's `id`, echoed verbatim in its reply: a number or a string.
/// Integers stay exact (`Int64`); other numbers are `Double`.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    case int(Int64)
    case double(Double)
    case string(String)

    public var description: String {
        switch self {
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): value
        }
    }

    public var json: JSONValue {
        switch self {
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        }
    }

    /// The id a JSON value carries; nil for anything but a number or string.
    public init?(json: JSONValue) {
        switch json {
        case .int(let value): self = .int(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        default: return nil
        }
    }
}

extension RequestID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

/// A stable wire error code (`"error":{"code":…}`). A struct rather than an
/// enum so a client can carry codes from a newer daemon.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The line is not valid JSON (or not valid UTF-8).
    public static let badJSON = ErrorCode(rawValue: "badJSON")
    /// Valid JSON, but not a valid request: not an object, a missing or
    /// mistyped argument, a value out of range.
    public static let badRequest = ErrorCode(rawValue: "badRequest")
    public static let unknownOp = ErrorCode(rawValue: "unknownOp")
    public static let unknownKeyPath = ErrorCode(rawValue: "unknownKeyPath")
    /// The line passed 64 KiB; the daemon closes the connection after this reply.
    public static let lineTooLong = ErrorCode(rawValue: "lineTooLong")
    public static let notAuthorized = ErrorCode(rawValue: "notAuthorized")
    /// An admin request from a client that is neither root nor in the admin group.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    public static let unavailable = ErrorCode(rawValue: "unavailable")
    public static let timeout = ErrorCode(rawValue: "timeout")
    /// The daemon failed to carry out a valid request (e.g. could not write its config).
    public static let internalError = ErrorCode(rawValue: "internalError")
    /// A change could not be saved (disk full, read-only filesystem, I/O
    /// error), so it was not made: acknowledged means persisted.
    public static let storageFailed = ErrorCode(rawValue: "storageFailed")
    /// The request names something that does not exist (a saved place).
    public static let notFound = ErrorCode(rawValue: "notFound")

    public static let allKnown: [ErrorCode] = [
        .badJSON, .badRequest, .unknownOp, .unknownKeyPath, .lineTooLong, .notAuthorized, .forbidden,
        .unavailable, .timeout, .internalError, .storageFailed, .notFound,
    ]

    public init(_ code: EngineError.Code) {
        self.init(rawValue: code.rawValue)
    }
}

/// An error reply: the wire `code`, a human `message`, and the request id
/// when it could be recovered from the line (so the reply can echo it).
public struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var id: RequestID?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    public init(_ error: EngineError, id: RequestID? = nil) {
        self.init(ErrorCode(error.code), error.message, id: id)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension ProtocolError {
    /// The reply to send when the framer reports `.lineTooLong` (then close).
    public static func lineTooLong(maxLineLength: Int = LineFramer.defaultMaxLineLength) -> ProtocolError {
        ProtocolError(.lineTooLong, "line longer than \(maxLineLength) bytes")
    }

    /// The reply to an admin op from a client that is neither root nor in the admin group.
    public static func forbidden(_ operation: ClientRequest.Operation, adminGroup: String, id: RequestID?)
        -> ProtocolError
    {
        ProtocolError(.forbidden, "\(operation.name) needs root or the \(adminGroup) group", id: id)
    }
}

extension ProtocolError {
    /// A refused argument of a place or a geo lookup: `badRequest` naming its field.
    public init(_ error: GeoQueryError, id: RequestID? = nil) {
        self.init(.badRequest, "\"\(error.field)\": \(error.message)", id: id)
    }

    /// Runs one of AklocGeo's argument rules, as a request error.
    static func checking<T>(_ rule: () throws(GeoQueryError) -> T) throws(ProtocolError) -> T {
        do {
            return try rule()
        } catch {
            throw ProtocolError(error)
        }
    }
}
