#!/usr/bin/env bash
# Fuzz the request decoder and line framer, and the track import readers,
# with libFuzzer.
#
#   fuzz/run.sh [RUNS] [extra libFuzzer flags…]
#
# Builds AklocCore, AklocJSON, AklocGeo and AklocProtocol from source with
# `swiftc -sanitize=fuzzer,address` into fuzz/out/ (gitignored), then runs
# RUNS executions (default 100000) starting from the seed corpus in
# fuzz/corpus/ (new inputs go to fuzz/out/corpus/, the seeds stay as they
# are). Exits non-zero on a crash, leak or broken invariant; the input is
# saved under fuzz/out/ as crash-*.
#
# Environment: SWIFTC (default: swiftc on PATH), FUZZ_OPT (default -O),
# FUZZ_MAX_LEN (default 4096 bytes per input).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-100000}
shift || true
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
opt=${FUZZ_OPT:--O}
out=fuzz/out
mkdir -p "$out/modules" "$out/corpus"

flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 "$opt" -g -I "$out/modules")

echo "fuzz: building with $swiftc ($opt)" >&2
"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocCore \
    -emit-module -emit-module-path "$out/modules/AklocCore.swiftmodule" \
    -o "$out/libAklocCore.a" Sources/AklocCore/*.swift
"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocJSON \
    -emit-module -emit-module-path "$out/modules/AklocJSON.swiftmodule" \
    -o "$out/libAklocJSON.a" Sources/AklocJSON/*.swift
"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocGeo \
    -emit-module -emit-module-path "$out/modules/AklocGeo.swiftmodule" \
    -o "$out/libAklocGeo.a" Sources/AklocGeo/*.swift
"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocProtocol \
    -emit-module -emit-module-path "$out/modules/AklocProtocol.swiftmodule" \
    -o "$out/libAklocProtocol.a" Sources/AklocProtocol/*.swift
"$swiftc" "${flags[@]}" -module-name RequestFuzzer -o "$out/request-fuzzer" \
    fuzz/RequestFuzzer.swift "$out/libAklocProtocol.a" "$out/libAklocGeo.a" "$out/libAklocJSON.a" "$out/libAklocCore.a" -lm

"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocTrackImport \
    -emit-module -emit-module-path "$out/modules/AklocTrackImport.swiftmodule" \
    -o "$out/libAklocTrackImport.a" Sources/AklocTrackImport/*.swift
"$swiftc" "${flags[@]}" -module-name TrackImportFuzzer -o "$out/import-fuzzer" \
    fuzz/TrackImportFuzzer.swift "$out/libAklocTrackImport.a" "$out/libAklocProtocol.a" "$out/libAklocGeo.a" \
    "$out/libAklocJSON.a" "$out/libAklocCore.a" -lm

echo "fuzz: running $runs executions" >&2
# ASan's leak checker needs ptrace, which containers often forbid; leaks are
# not what this target looks for.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$out/request-fuzzer" \
    -runs="$runs" -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 \
    -artifact_prefix="$out/" "$@" "$out/corpus" fuzz/corpus

# The import readers, from their own seeds (a GPX, a Records.json, a Timeline.json).
mkdir -p "$out/corpus-import"
echo "fuzz: running $runs executions of the import readers" >&2
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$out/import-fuzzer" \
    -runs="$runs" -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 \
    -artifact_prefix="$out/" "$@" "$out/corpus-import" fuzz/corpus-import
