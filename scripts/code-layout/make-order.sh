#!/usr/bin/env bash
# make code-layout: rewrites Sources/aklocd/aklocd.order, the list of the
# functions aklocd runs, which lld lays out together (bench/NOTES.md, "Code
# layout"). It runs the release aklocd under callgrind through what `make
# bench` measures: a gpsd replay (gpsfake, bundg_zeus_9), one subscriber with
# every fix, `akloc where`'s two lookups, then a clean stop. Run it after
# changes that move a lot of code; a stale list only costs memory, never
# correctness (names it no longer finds are skipped). The next build relinks
# (its link command differs from this script's, which writes a map).
set -euo pipefail
cd "$(dirname "$0")/../.."

swift=${SWIFT:-swift}
work=$(mktemp -d /tmp/akloc-layout.XXXXXX)
pids=()
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# shellcheck source=scripts/stop-started.sh
. scripts/stop-started.sh
cleanup() {
    stop_started "$port" "${pids[@]}"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The map names every input section of .text and the symbols in it.
"$swift" build -c release --product aklocd -Xlinker --no-demangle -Xlinker "-Map=$work/aklocd.map"
"$swift" build -c release --product akloc
bin=$("$swift" build -c release --show-bin-path)

gpsfake -q -c 0.03 -P "$port" Tests/Fixtures/gpsd-logs/bundg_zeus_9.log >"$work/gpsfake.log" 2>&1 &
pids+=($!)
printf '[geo]\ndata-dir = %s/data\n' "$PWD" >"$work/akloc.conf"
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
    "$bin/aklocd" --socket "$work/akloc.sock" --gpsd "127.0.0.1:$port" --config "$work/akloc.conf" \
    --state-dir "$work/state" --log-level warning 2>"$work/aklocd.log" &
daemon=$!
pids+=($daemon)

# One subscriber that takes every fix; it returns after 40 of them, so the
# track's 5 s sync and the 30 s state save have run too.
python3 - "$work/akloc.sock" <<'PY'
import socket, sys, time
deadline = time.monotonic() + 120
while True:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); break
    except OSError:
        if time.monotonic() > deadline: sys.exit("aklocd did not come up under valgrind")
        time.sleep(0.2)
s.settimeout(120)
s.sendall(b'{"id":1,"op":"startUpdatingLocation","policy":{"minInterval":0}}\n')
buffer, fixes = b"", 0
while fixes < 40:
    data = s.recv(65536)
    if not data: sys.exit("aklocd closed the subscriber's connection")
    buffer += data
    *lines, buffer = buffer.split(b"\n")
    fixes += sum(1 for line in lines if b'"latitude"' in line)
PY
"$bin/akloc" --socket "$work/akloc.sock" where
kill -TERM "$daemon"
wait "$daemon" || true

python3 scripts/code-layout/aklocd-order.py "$work/callgrind.out" "$work/aklocd.map" Sources/aklocd/aklocd.order
echo "wrote Sources/aklocd/aklocd.order ($(wc -l <Sources/aklocd/aklocd.order) functions)"
