#!/usr/bin/env bash
# A minbase Debian 13 (trixie) root with trixie's gpsd, for the tests that
# replay the captures through gpsd 3.25 (Tests/IntegrationTests/TrixieTests.swift,
# docs/testing.md "Debian 13"). Prints the root's path on stdout.
#
# Made with debootstrap from the Debian mirror this machine's apt already
# uses, then apt inside it; cached in $AKLOC_TRIXIE_CACHE (default
# /var/cache/akloc-test) under a key of the ISO week, the mirror and the
# package list, so a warm run costs nothing and the root is rebuilt weekly.
# The tests never write to it: each mounts an overlay on top.
# Needs root. Whatever it mounts is unmounted on any exit.
set -euo pipefail

packages=(gpsd gpsd-clients gpsd-tools python3-gps)
cache=${AKLOC_TRIXIE_CACHE:-/var/cache/akloc-test}

# The first Debian (not security) mirror of apt's sources, deb822 or one-line.
mirror=$(
    { grep -shE '^URIs:' /etc/apt/sources.list.d/*.sources || true
      grep -shE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true
    } | awk '{print $2}' | grep -E '/debian/?$' | head -1 || true
)
[ -n "$mirror" ] || { echo "trixie-root: no Debian mirror in /etc/apt/sources.list*" >&2; exit 1; }

key="$(date -u +%G-W%V)-$(printf '%s %s' "$mirror" "${packages[*]}" | sha256sum | cut -c1-12)"
root="$cache/trixie-$key"
mkdir -p "$cache"
exec 9>"$cache/trixie.lock"
flock 9
if [ -e "$root/.akloc-complete" ]; then
    echo "$root"
    exit 0
fi

work=$(mktemp -d "$cache/trixie-build.XXXXXX")
cleanup() {
    for mount in "$work/root/dev/pts" "$work/root/dev" "$work/root/proc"; do
        mountpoint -q "$mount" 2>/dev/null && umount "$mount"
    done
    rm -rf "$work"
}
trap cleanup EXIT

echo "trixie-root: debootstrap trixie from $mirror into $root (packages: ${packages[*]})" >&2
debootstrap --variant=minbase trixie "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -30 "$work/debootstrap.log" >&2
    exit 1
}
mount -t proc proc "$work/root/proc"
mount --bind /dev "$work/root/dev"
mount --bind /dev/pts "$work/root/dev/pts"
chroot "$work/root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" \
    >"$work/apt.log" 2>&1 || {
    tail -30 "$work/apt.log" >&2
    exit 1
}
chroot "$work/root" apt-get clean
umount "$work/root/dev/pts" "$work/root/dev" "$work/root/proc"
touch "$work/root/.akloc-complete"
mv "$work/root" "$root"
# Older weeks' roots go: one root is kept.
for old in "$cache"/trixie-*; do
    [ "$old" = "$root" ] || [ "$old" = "$cache/trixie.lock" ] || [ "$old" = "$work" ] || rm -rf "$old"
done
echo "$root"
