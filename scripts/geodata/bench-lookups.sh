#!/bin/sh
# Country and time-zone lookup latency (docs/geodata.md "Speed"): builds
# AklocCore, AklocJSON and AklocGeo with -O into a temporary directory, then times one
# lookup per point over every reference airport and 10 000 random points.
# Not part of make test; the numbers go to docs/geodata.md by hand.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swiftc -O -parse-as-library -module-name AklocCore -emit-module -emit-module-path "$out/AklocCore.swiftmodule" \
    -emit-library -static -o "$out/libAklocCore.a" "$root"/Sources/AklocCore/*.swift
swiftc -O -parse-as-library -module-name AklocJSON -emit-module -emit-module-path "$out/AklocJSON.swiftmodule" \
    -emit-library -static -o "$out/libAklocJSON.a" "$root"/Sources/AklocJSON/*.swift
swiftc -O -parse-as-library -module-name AklocGeo -I "$out" -emit-module -emit-module-path "$out/AklocGeo.swiftmodule" \
    -emit-library -static -o "$out/libAklocGeo.a" "$root"/Sources/AklocGeo/*.swift
swiftc -O "$root/scripts/geodata/bench_lookups.swift" -I "$out" -L "$out" -lAklocGeo -lAklocJSON -lAklocCore -o "$out/bench"
"$out/bench" "$root"
