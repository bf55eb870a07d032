#!/usr/bin/env bash
# Fuzz with libFuzzer what clients, files and brokers control: the request
# decoder and line framer (request-fuzzer, seeds fuzz/corpus/), the track
# import readers (import-fuzzer, seeds fuzz/corpus-import/), and the
# OwnTracks command parser for messages on <topic>/cmd (command-fuzzer,
# seeds fuzz/corpus-commands/).
#
#   fuzz/run.sh [RUNS] [extra libFuzzer flags…]
#
# Builds AklocCore, AklocJSON, AklocGeo, AklocProtocol and AklocTrackImport,
# and the pure command files of AklocMQTT, from source with `swiftc
# -sanitize=fuzzer,address` into fuzz/out/ (gitignored), then runs RUNS
# executions (default 100000) of each target starting from its seed corpus
# (new inputs go to fuzz/out/corpus*/, the seeds stay as they are). Exits
# non-zero on a crash, leak or broken invariant; the input is saved under
# fuzz/out/ as crash-*.
#
# Environment: SWIFTC (default: swiftc on PATH), FUZZ_OPT (default -O),
# FUZZ_MAX_LEN (default 4096 bytes per input), FUZZ_TARGETS (default
# "request import commands": which targets run).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-100000}
shift || true
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
opt=${FUZZ_OPT:--O}
out=fuzz/out
mkdir -p "$out/modules"

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

# The command parser and the payload types it builds, without the rest of
# AklocMQTT (libmosquitto, the daemon's loop): they are pure.
"$swiftc" "${flags[@]}" -emit-library -static -module-name AklocMQTT \
    -emit-module -emit-module-path "$out/modules/AklocMQTT.swiftmodule" \
    -o "$out/libAklocMQTTCommands.a" Sources/AklocMQTT/OwnTracksCommand.swift \
    Sources/AklocMQTT/OwnTracksCommandError.swift Sources/AklocMQTT/OwnTracksPayload.swift \
    Sources/AklocMQTT/OwnTracksPayload+Places.swift Sources/AklocMQTT/OwnTracksPayload+Commands.swift \
    Sources/AklocMQTT/MQTTSettings.swift Sources/AklocMQTT/MQTTProtocolChoice.swift Sources/AklocMQTT/ForwardQueue.swift
"$swiftc" "${flags[@]}" -module-name CommandFuzzer -o "$out/command-fuzzer" \
    fuzz/CommandFuzzer.swift "$out/libAklocMQTTCommands.a" "$out/libAklocProtocol.a" "$out/libAklocGeo.a" \
    "$out/libAklocJSON.a" "$out/libAklocCore.a" -lm

# ASan's leak checker needs ptrace, which containers often forbid; leaks are
# not what these targets look for.
for target in ${FUZZ_TARGETS:-request import commands}; do
    case $target in
    request) binary=request-fuzzer corpus=corpus seeds=fuzz/corpus ;;
    import) binary=import-fuzzer corpus=corpus-import seeds=fuzz/corpus-import ;;
    commands) binary=command-fuzzer corpus=corpus-commands seeds=fuzz/corpus-commands ;;
    *) echo "fuzz: unknown target $target (request, import, commands)" >&2; exit 2 ;;
    esac
    mkdir -p "$out/$corpus"
    echo "fuzz: running $runs executions of $binary" >&2
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} "$out/$binary" \
        -runs="$runs" -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 \
        -artifact_prefix="$out/" "$@" "$out/$corpus" "$seeds"
done
