import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// Persists `PersistentState` (paused flag, last location, authorization
/// decisions) as `state.json` in the state directory (DESIGN §5).
///
/// Writes are atomic: a crash or SIGKILL leaves the previous or the new file,
/// never a torn one. A file that cannot be read back anyway (a disk fault, an
/// editor accident) is moved aside and the daemon starts clean: losing
/// decisions is better than refusing to run, and the bad file is kept for
/// the administrator.
public struct StateStore: Sendable {
    public static let defaultDirectory = "/var/lib/akloc"
    public static let fileName = "state.json"
    /// Written into the file; a file with another version is not trusted.
    public static let formatVersion = 1
    /// Far beyond any real state (one decision per uid).
    public static let maximumFileSize = 16 << 20

    public let directory: String

    public init(directory: String = StateStore.defaultDirectory) {
        self.directory = directory
    }

    public var path: String { directory + "/" + Self.fileName }

    public struct Loaded: Hashable, Sendable {
        public var state: PersistentState
        /// Set when a bad file was moved aside; the daemon logs it.
        public var warning: StateStoreWarning?
        /// False when there was no state file (first start).
        public var fileExisted: Bool
    }

    /// Reads the state, creating the directory (mode 0700) if it is missing.
    /// `now` names a file moved aside (`state.json.corrupt-20261130T151411Z`).
    public func load(now: time_t = time_t(PosixClock.realtime.now().seconds)) throws(StateStoreError) -> Loaded {
        try ensureDirectory()
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path, limit: Self.maximumFileSize)
        } catch  where error == .noSuchFile {
            return Loaded(state: PersistentState(), warning: nil, fileExisted: false)
        } catch {
            throw StateStoreError(.unreadable, path: path, "cannot read the state file: \(error)", errno: error)
        }
        let problem: (StateStoreWarning.Code, String)
        switch Self.decode(bytes) {
        case .success(let state):
            return Loaded(state: state, warning: nil, fileExisted: true)
        case .failure(let failure):
            problem = (failure.code, failure.reason)
        }
        let aside = try moveAside(now: now)
        let warning = StateStoreWarning(
            code: problem.0, movedTo: aside,
            message: "\(path): \(problem.1); moved it to \(aside) and starting with a clean state")
        return Loaded(state: PersistentState(), warning: warning, fileExisted: true)
    }

    /// Writes the state atomically (temp file, fsync, rename, fsync of the
    /// directory), mode 0600.
    public func save(_ state: PersistentState) throws(StateStoreError) {
        try ensureDirectory()
        let bytes = Self.encode(state)
        do {
            try AtomicFile.write(bytes, to: path, mode: 0o600)
        } catch {
            throw StateStoreError(.writeFailed, path: path, "cannot write the state file: \(error)", errno: error)
        }
    }

    private func ensureDirectory() throws(StateStoreError) {
        do {
            try FileSystem.createDirectory(directory, mode: 0o700)
        } catch {
            throw StateStoreError(
                .directoryUnavailable, path: directory, "cannot create the state directory: \(error)", errno: error)
        }
    }

    private func moveAside(now: time_t) throws(StateStoreError) -> String {
        try FileSystem.moveAside(path, in: directory, now: now)
    }

    /// The file format: the state's fields next to `version`, with uids as
    /// JSON object keys and the location in its wire form; pretty-printed,
    /// keys sorted, for the administrator who looks.
    static func encode(_ state: PersistentState) -> [UInt8] {
        var members: [String: JSONValue] = [
            "version": .int(Int64(formatVersion)), "paused": .bool(state.paused),
            "authorizationDecisions": .object(
                Dictionary(
                    uniqueKeysWithValues: state.authorizationDecisions.map {
                        (String($0.key), .string($0.value.rawValue))
                    }
                )),
        ]
        if let location = state.lastLocation {
            var wire = JSONWriter()
            ServerEncoder.writeLocation(location, to: &wire)
            // The writer's own output always parses.
            members["lastLocation"] = (try? JSONValue.parse(wire.bytes).get()) ?? .null
        }
        var writer = JSONWriter(capacity: 512)
        writer.prettyValue(.object(members))
        writer.byte(0x0A)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) -> Result<PersistentState, DecodeFailure> {
        guard bytes.count <= maximumFileSize else {
            return .failure(DecodeFailure(.corrupt, "larger than \(maximumFileSize) bytes"))
        }
        guard case .success(let file) = JSONValue.parse(bytes), case .object(let members) = file,
            case .int(let version) = members["version"]
        else {
            return .failure(
                DecodeFailure(.corrupt, bytes.isEmpty ? "empty file" : "not a valid state file (truncated?)"))
        }
        guard version == formatVersion else {
            return .failure(
                DecodeFailure(
                    .unsupportedVersion, "format version \(version), this aklocd reads version \(formatVersion)"))
        }
        guard let paused = members["paused"]?.boolValue else {
            return .failure(DecodeFailure(.corrupt, "not a valid state file: \"paused\" is not a boolean"))
        }
        var lastLocation: Location?
        if let value = members["lastLocation"], value != .null {
            guard let location = Location(json: value) else {
                return .failure(DecodeFailure(.corrupt, "not a valid state file: \"lastLocation\" is not a location"))
            }
            lastLocation = location
        }
        guard let answers = members["authorizationDecisions"]?.objectValue else {
            return .failure(DecodeFailure(.corrupt, "not a valid state file: no \"authorizationDecisions\" object"))
        }
        var decisions: [UInt32: AuthorizationStatus] = [:]
        for (key, value) in answers {
            guard let uid = UInt32(key) else {
                return .failure(DecodeFailure(.corrupt, "not a valid state file: uid \"\(key)\""))
            }
            guard let status = value.stringValue.flatMap(AuthorizationStatus.init(rawValue:)) else {
                return .failure(DecodeFailure(.corrupt, "not a valid state file: answer for uid \(uid)"))
            }
            decisions[uid] = status
        }
        return .success(PersistentState(paused: paused, lastLocation: lastLocation, authorizationDecisions: decisions))
    }

    struct DecodeFailure: Error {
        var code: StateStoreWarning.Code
        var reason: String

        init(_ code: StateStoreWarning.Code, _ reason: String) {
            self.code = code
            self.reason = reason
        }
    }
}
