#!/bin/sh
# Fails if aklocd links Foundation (DESIGN §1: "No Foundation in aklocd";
# Foundation alone costs about 11 MB of resident memory).
#
#   scripts/check-no-foundation.sh [path/to/aklocd]
#
# Checks the binary's own NEEDED entries (readelf -d) and what the loader
# would map (ldd), so a C library or a stale object that pulls Foundation
# in is caught too. Without an argument it checks SwiftPM's debug build.
set -eu
binary=${1:-$(swift build --show-bin-path)/aklocd}
if [ ! -x "$binary" ]; then
    echo "check-no-foundation: $binary is not an executable (build it first)" >&2
    exit 2
fi
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if [ -z "$needed" ]; then
    echo "check-no-foundation: readelf found no NEEDED entries in $binary" >&2
    exit 2
fi
found=$( { echo "$needed"; ldd "$binary" | awk '{print $1}'; } | grep -i '^libFoundation' | sort -u || true)
if [ -n "$found" ]; then
    echo "check-no-foundation: $binary links Foundation:" >&2
    echo "$found" | sed 's/^/  /' >&2
    echo "  (an import of Foundation in a module aklocd links; find it with: grep -rn 'import Foundation' Sources)" >&2
    exit 1
fi
# aklocd links the Swift runtime statically (Package.swift), where a static
# Foundation would leave no NEEDED entry: look for its symbols too.
if nm "$binary" 2>/dev/null | grep -q 's10Foundation\|s20FoundationEssentials'; then
    echo "check-no-foundation: $binary has Foundation linked in statically" >&2
    exit 1
fi
echo "check-no-foundation: $binary links no Foundation ($(echo "$needed" | wc -l) libraries)"
