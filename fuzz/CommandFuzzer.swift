// libFuzzer entry for what a broker controls: the payload of a message on
// `<topic>/cmd` -> OwnTracksCommand.parse. Built by fuzz/run.sh with
// `swiftc -sanitize=fuzzer,address`.
//
// Besides "no crash, no memory error", it traps (libFuzzer then saves the
// input as a crash) when an invariant breaks:
// - with no command enabled nothing is carried out: every input is refused,
//   and one the full set accepts (or refuses only for its waypoints) is
//   refused as notEnabled, all others with the same code as with the full set;
// - an accepted setWaypoints holds at most an owner's places, each name once,
//   each name, coordinate and radius one the places store accepts;
// - the input's first byte picks an enabled subset: a command outside it is
//   never accepted.

import AklocCore
import AklocGeo
import AklocMQTT

private let everything = Set(OwnTracksCommand.Action.allCases)

@_cdecl("LLVMFuzzerTestOneInput")
public func commandFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let full = OwnTracksCommand.parse(input, enabled: everything)
    let none = OwnTracksCommand.parse(input, enabled: [])

    guard case .failure(let refused) = none else { fatalError("carried out with no command enabled") }
    switch full {
    case .success:
        guard refused.code == .notEnabled else { fatalError("accepted, but refused as \(refused.code) when disabled") }
    case .failure(let error) where error.code == .badWaypoints:
        guard refused.code == .notEnabled else { fatalError("disabled setWaypoints refused as \(refused.code)") }
    case .failure(let error):
        guard refused.code == error.code else {
            fatalError("refused as \(error.code) when enabled but \(refused.code) when disabled")
        }
    }

    if case .success(.setWaypoints(let waypoints)) = full {
        guard waypoints.count <= SavedPlace.maxPerOwner, Set(waypoints.map(\.name)).count == waypoints.count else {
            fatalError("setWaypoints: too many waypoints or a name twice")
        }
        for waypoint in waypoints {
            guard Coordinate(latitude: waypoint.latitude, longitude: waypoint.longitude).isValid else {
                fatalError("setWaypoints: invalid coordinate")
            }
            do throws(GeoQueryError) {
                try SavedPlace.checkName(waypoint.name, field: "desc")
                try SavedPlace.checkRadius(waypoint.radius)
            } catch {
                fatalError("setWaypoints: a place the store refuses: \(error.message)")
            }
        }
    }

    // A subset chosen by the first byte: what it does not name is never run.
    if size > 0 {
        let subset = Set(
            OwnTracksCommand.Action.allCases.enumerated().filter { input[0] & (1 << $0.offset) != 0 }.map(\.element))
        if case .success(let command) = OwnTracksCommand.parse(input, enabled: subset) {
            guard subset.contains(command.action) else { fatalError("\(command.action) ran while not enabled") }
            guard case .success(let same) = full, same == command else { fatalError("the subset changed the command") }
        }
    }
    return 0
}
