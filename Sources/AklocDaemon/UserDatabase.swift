import Glibc

/// Names and group memberships from NSS (passwd and group databases), looked
/// up at accept and cached per uid and gid until the next reload, so a
/// thousand connects from one user cost one lookup.
///
/// The peer's gid (from SO_PEERCRED) counts as one of its groups, so the
/// cache is keyed by both: a setgid helper's connection holds its group's
/// rights, and the same user's other processes must not inherit them.
struct UserDatabase {
    private struct Key: Hashable {
        var uid: UInt32
        var gid: UInt32
    }

    private var cache: [Key: Authorizer.Identity] = [:]

    mutating func identity(uid: UInt32, gid: UInt32) -> Authorizer.Identity {
        if let known = cache[Key(uid: uid, gid: gid)] { return known }
        var groups: [String] = []
        var name: String?
        var record = passwd()
        var buffer = [CChar](repeating: 0, count: 16_384)
        var result: UnsafeMutablePointer<passwd>?
        if getpwuid_r(uid, &record, &buffer, buffer.count, &result) == 0, let entry = result {
            let userName = String(cString: entry.pointee.pw_name)
            name = userName
            var count: Int32 = 256
            var gids = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(userName, entry.pointee.pw_gid, &gids, &count) >= 0 {
                for groupID in gids.prefix(Int(count)) {
                    if let group = UserDatabase.groupName(groupID), !groups.contains(group) { groups.append(group) }
                }
            }
        }
        if let primary = UserDatabase.groupName(gid), !groups.contains(primary) { groups.append(primary) }
        let identity = Authorizer.Identity(uid: uid, userName: name, groupNames: groups)
        cache[Key(uid: uid, gid: gid)] = identity
        return identity
    }

    mutating func forget() {
        cache.removeAll()
    }

    private static func groupName(_ gid: gid_t) -> String? {
        var record = group()
        var buffer = [CChar](repeating: 0, count: 65_536)
        var result: UnsafeMutablePointer<group>?
        guard getgrgid_r(gid, &record, &buffer, buffer.count, &result) == 0, let entry = result else { return nil }
        return String(cString: entry.pointee.gr_name)
    }
}
