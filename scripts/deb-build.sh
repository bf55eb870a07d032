#!/bin/sh
# `make deb`: builds akloc_VERSION_ARCH.deb in the top directory with
# dpkg-buildpackage and debian/ (README.source). The version has one owner,
# Sources/AklocCore/AklocVersion.swift: debian/changelog is written from it
# here (and is not in git). The .deb, .buildinfo and .changes are made in
# build/deb/, and the .deb is linked into the top directory.
#   scripts/deb-build.sh             # SWIFT=/path/to/swift to pick a toolchain
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

version=$(sed -n 's/^ *public static let string = "\([^"]*\)".*/\1/p' Sources/AklocCore/AklocVersion.swift)
case $version in
    [0-9]*) ;;
    *) echo "deb-build: no version in Sources/AklocCore/AklocVersion.swift" >&2; exit 1 ;;
esac
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
swift=${SWIFT:-swift}
if ! command -v "$swift" >/dev/null 2>&1; then
    echo "deb-build: no Swift toolchain ('$swift' is not in PATH; set SWIFT=/path/to/swift)" >&2
    exit 1
fi

# The changelog's date is the last commit's, so two builds of one commit
# are the same package (SOURCE_DATE_EPOCH also reaches dpkg-deb's mtimes).
if epoch=$(git log -1 --format=%ct 2>/dev/null) && [ -n "$epoch" ]; then
    origin="git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ', with local changes')"
else
    epoch=$(date +%s)
    origin="a source tree without git"
fi
export SOURCE_DATE_EPOCH="$epoch"
maintainer=$(sed -n 's/^Maintainer: //p' debian/control)
cat >debian/changelog <<CHANGELOG
akloc ($version) unstable; urgency=medium

  * akloc $version, built from $origin.

 -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")
CHANGELOG

out="$top/build/deb"
mkdir -p "$out"
rm -f "akloc_${version}_$arch.deb" "$out/akloc_${version}_$arch".*
# Build-Depends are checked (not -d): all of them are Debian packages.
env SWIFT="$swift" DEB_OUT_DIR="$out" dpkg-buildpackage -b -us -uc \
    --buildinfo-file="$out/akloc_${version}_$arch.buildinfo" --buildinfo-option="-u$out" \
    --changes-file="$out/akloc_${version}_$arch.changes" --changes-option="-u$out"
ln -f "$out/akloc_${version}_$arch.deb" "akloc_${version}_$arch.deb"
echo "deb-build: $top/akloc_${version}_$arch.deb"
