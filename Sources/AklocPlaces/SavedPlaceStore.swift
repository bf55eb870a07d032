import AklocCore
import AklocGeo
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// Saved places on disk (DESIGN §9): one file per owner,
/// `<state dir>/places/<uid>.json`, written as `state.json` is (atomically,
/// mode 0600), so one owner's save never rewrites another's places and a
/// damaged file costs only its owner's. A file that does not read back is
/// moved aside (`<uid>.json.corrupt-<UTC time>`) with a warning and that
/// owner starts with no places, as `StateStore` does with `state.json`.
public struct SavedPlaceStore: Sendable {
    static let directoryName = "places"
    static let formatVersion = 1
    /// 1000 places with 1 KiB notes fit several times over.
    static let maximumFileSize = 4 << 20

    /// `<state dir>/places`.
    public let directory: String

    public init(stateDirectory: String) {
        directory = stateDirectory + "/" + Self.directoryName
    }

    public func path(of owner: UInt32) -> String { directory + "/\(owner).json" }

    public struct Loaded: Sendable {
        public var places: SavedPlaces
        /// One per file moved aside; the daemon logs each.
        public var warnings: [StateStoreWarning]
    }

    /// Reads every owner's file. Only a directory it cannot use at all is an
    /// error (the daemon then refuses to start, as with the state directory).
    public func load(now: time_t = time_t(PosixClock.realtime.now().seconds)) throws(StateStoreError) -> Loaded {
        try ensureDirectory()
        let names: [String]
        do {
            names = try FileSystem.entries(of: directory)
        } catch {
            throw StateStoreError(.unreadable, path: directory, "cannot list saved places: \(error)", errno: error)
        }
        var places = SavedPlaces()
        var warnings: [StateStoreWarning] = []
        for name in names {
            guard name.hasSuffix(".json"), let owner = UInt32(name.dropLast(5)), name == "\(owner).json" else {
                continue
            }
            let file = path(of: owner)
            let bytes: [UInt8]
            do {
                bytes = try FileReader.read(file, limit: Self.maximumFileSize)
            } catch {
                throw StateStoreError(.unreadable, path: file, "cannot read saved places: \(error)", errno: error)
            }
            switch Self.decode(bytes, owner: owner) {
            case .success(let owned):
                places.replaceAll(of: owner, with: owned)
            case .failure(let reason):
                let aside = try FileSystem.moveAside(file, in: directory, now: now)
                warnings.append(
                    StateStoreWarning(
                        code: .corrupt, movedTo: aside,
                        message: "\(file): \(reason.message); moved it to \(aside), uid \(owner) has no saved places"))
            }
        }
        return Loaded(places: places, warnings: warnings)
    }

    /// Writes one owner's places atomically (an empty list removes the file).
    public func save(_ places: [SavedPlace], of owner: UInt32) throws(StateStoreError) {
        try ensureDirectory()
        let file = path(of: owner)
        do {
            if places.isEmpty {
                do {
                    try FileSystem.remove(file)
                } catch  where error == .noSuchFile {}
                try FileSystem.syncDirectory(directory)
            } else {
                try AtomicFile.write(Self.encode(places, owner: owner), to: file, mode: 0o600)
            }
        } catch {
            throw StateStoreError(.writeFailed, path: file, "cannot write saved places: \(error)", errno: error)
        }
    }

    private func ensureDirectory() throws(StateStoreError) {
        do {
            try FileSystem.createDirectory(FileSystem.directory(of: directory), mode: 0o700)
            try FileSystem.createDirectory(directory, mode: 0o700)
        } catch {
            throw StateStoreError(
                .directoryUnavailable, path: directory, "cannot create the saved places directory: \(error)",
                errno: error)
        }
    }

    /// `{"version":1,"owner":uid,"places":[…]}`, one place a line for the
    /// administrator who looks, each in its wire form.
    static func encode(_ places: [SavedPlace], owner: UInt32) -> [UInt8] {
        var writer = JSONWriter(capacity: 200 * places.count + 64)
        writer.raw("{\"version\":")
        writer.integer(Int64(formatVersion))
        writer.raw(",\"owner\":")
        writer.integer(Int64(owner))
        writer.raw(",\"places\":[")
        for (index, place) in places.enumerated() {
            writer.raw(index == 0 ? "\n" : ",\n")
            place.write(to: &writer)
        }
        writer.raw("\n]}\n")
        return writer.bytes
    }

    struct DecodeFailure: Error {
        var message: String
    }

    /// Every rule a saved place has is checked again on the way in: a file
    /// edited by hand cannot smuggle in a 10 km name or a duplicate.
    static func decode(_ bytes: [UInt8], owner: UInt32) -> Result<[SavedPlace], DecodeFailure> {
        guard case .success(let file) = JSONValue.parse(bytes), case .object(let members) = file,
            case .int(let version) = members["version"]
        else {
            return .failure(DecodeFailure(message: bytes.isEmpty ? "empty file" : "not a places file (truncated?)"))
        }
        guard version == formatVersion else {
            return .failure(DecodeFailure(message: "format version \(version), this aklocd reads \(formatVersion)"))
        }
        guard case .int(let stored)? = members["owner"], stored == Int64(owner) else {
            return .failure(DecodeFailure(message: "\"owner\" is not \(owner)"))
        }
        guard let list = members["places"]?.arrayValue, list.count <= SavedPlace.maxPerOwner else {
            return .failure(DecodeFailure(message: "no \"places\" array of at most \(SavedPlace.maxPerOwner)"))
        }
        var places: [SavedPlace] = []
        var names: Set<String> = []
        for (index, value) in list.enumerated() {
            let place: SavedPlace
            do {
                place = try SavedPlace(json: value)
            } catch {
                return .failure(DecodeFailure(message: "place \(index): \(error)"))
            }
            guard place.owner == owner, names.insert(place.name).inserted else {
                return .failure(DecodeFailure(message: "place \(index): another owner or a repeated name"))
            }
            places.append(place)
        }
        return .success(places)
    }
}
