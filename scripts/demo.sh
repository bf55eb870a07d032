#!/usr/bin/env bash
# make demo: a real gpsd (through gpsfake) loops a recorded boat trip on the
# IJsselmeer at about one fix a second, aklocd serves it on a private socket,
# and `akloc watch --human` prints the throttled fixes as they arrive.
# Ctrl-C stops everything this script started.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${BIN_DIR:?BIN_DIR must name the build output directory}
log=Tests/Fixtures/gpsd-logs/bundg_zeus_9.log
work=$(mktemp -d /tmp/akloc-demo.XXXXXX)
socket=$work/akloc.sock
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pids=()

# shellcheck source=scripts/stop-started.sh
. scripts/stop-started.sh
cleanup() {
    trap - EXIT INT TERM
    stop_started "$port" "${pids[@]}"
    rm -rf "$work"
    echo
    echo "demo stopped; everything it started is gone."
}
trap cleanup EXIT INT TERM

# 5000 sentences over 147 s of fixes: 0.03 s a sentence is about real time.
gpsfake -q -n -c 0.03 -P "$port" "$log" >"$work/gpsfake.log" 2>&1 &
pids+=($!)
# The geo data straight from the source tree: `watch --human` names the place.
printf '[geo]\ndata-dir = %s/data\n' "$PWD" >"$work/akloc.conf"
"$bin/aklocd" --socket "$socket" --gpsd "127.0.0.1:$port" --state-dir "$work/state" \
    --config "$work/akloc.conf" --log-level notice 2>"$work/aklocd.log" &
pids+=($!)

for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { echo "aklocd did not start:"; cat "$work/aklocd.log"; exit 1; }

cat <<INFO
aklocd is serving gpsd 127.0.0.1:$port (a boat trip replayed by gpsfake) on
  $socket
In a second terminal try:
  $bin/akloc --socket $socket status
  $bin/akloc --socket $socket watch rawLocation.coordinate
  $bin/akloc --socket $socket where
Fixes below are throttled: one at once, then every 5 s while the boat moves
faster than 0.4 m/s (--min/--max/--speed change that). Ctrl-C stops the demo.

INFO
"$bin/akloc" --socket "$socket" watch --human "$@" &
pids+=($!)
wait "${pids[-1]}"
