#!/bin/bash
# CPU per epoch of the floor, the libgps floor and one or more aklocd
# binaries, all reading ONE gpsd at the same time (bench/NOTES.md, "Measured
# together"):
#
#   bench/cpu-together.sh PATH-TO-akloc-bench [PATH-TO-aklocd ...]
#
# cpu-per-epoch.sh runs one program per gpsfake, one after another; on this
# VM the floor alone then moved 1.2-2.9 ms per epoch from run to run, more
# than the differences being measured. Here every reader gets the same
# bytes in the same seconds, so the host's noise falls on all of them alike
# and the ratios hold still. Its own gpsfake (bundg_zeus_9, -c 0.03,
# looping) on a free port; each reader on a private socket with one
# subscriber (aklocd: minInterval 0); after 8 s of warm-up perf stat's
# task-clock of each over WINDOW seconds (default 30), divided by the epochs
# the first aklocd's subscriber received. Everything it starts is stopped
# by pid, gpsd's shm segment removed, its directory deleted.
set -u
bench=$1
shift
window=${WINDOW:-30}
log=${GPSD_LOG:-/work/shared/gpsd-logs/bundg_zeus_9.log}
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d /tmp/akloc-cpu-together.XXXXXX)
pids=()
# shellcheck source=scripts/stop-started.sh
. "$(dirname "$0")/../scripts/stop-started.sh"
cleanup() {
    stop_started "${port:-0}" "${pids[@]}"
    rm -rf "$d"
}
trap cleanup EXIT
# The subscriber of cpu-per-epoch.sh, so both scripts count the same way.
sed -n '/^cat > "\$d\/sub.py"/,/^PY$/p' "$here/cpu-per-epoch.sh" | sed '1d;$d' > "$d/sub.py"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
TMPDIR=$d gpsfake -p -q -c 0.03 -P "$port" "$log" > "$d/gpsfake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
sleep 1
readers=(floor libgps-floor "$@")
labels=()
first_aklocd=
for i in "${!readers[@]}"; do
    spec=${readers[$i]}
    case $spec in
    floor | libgps-floor)
        "$bench" "$spec" "$port" "$d/s$i.sock" 2> "$d/err$i" &
        mode=$spec
        ;;
    *)
        mkdir -p "$d/state$i"
        : > "$d/akloc$i.conf"
        "$spec" --socket "$d/s$i.sock" --gpsd "127.0.0.1:$port" --config "$d/akloc$i.conf" \
            --state-dir "$d/state$i" --log-level warning 2> "$d/err$i" &
        mode=aklocd
        [ -z "$first_aklocd" ] && first_aklocd=$i
        ;;
    esac
    pids=($! "${pids[@]}")
    reader_pid[$i]=$!
    labels[$i]=$spec
    python3 "$d/sub.py" "$d/s$i.sock" "$mode" "$d/fixes$i" &
    pids=($! "${pids[@]}")
done
sleep 8
count=${first_aklocd:-0}
n0=$(wc -l < "$d/fixes$count")
stats=()
for i in "${!readers[@]}"; do
    perf stat -e task-clock -p "${reader_pid[$i]}" -x, -o "$d/perf$i" -- sleep "$window" &
    stats+=($!)
done
wait "${stats[@]}"
n1=$(wc -l < "$d/fixes$count")
epochs=$((n1 - n0))
[ "$epochs" -gt 0 ] || { echo "no epochs arrived" >&2; exit 1; }
line="epochs=$epochs load=$(cut -d' ' -f1 /proc/loadavg)"
floor=
for i in "${!readers[@]}"; do
    ms=$(awk -F, -v n="$epochs" '$3 == "task-clock" {printf "%.3f", $1 / n}' "$d/perf$i")
    [ "$i" = 0 ] && floor=$ms
    ratio=$(awk -v a="$ms" -v b="$floor" 'BEGIN {printf "%.2f", a / b}')
    line="$line ${labels[$i]##*/}=${ms}ms(${ratio}x)"
done
echo "$line"
