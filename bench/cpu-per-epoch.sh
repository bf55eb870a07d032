#!/bin/bash
# CPU and context switches per epoch of one daemon with one subscriber, for
# side-by-side runs (bench/NOTES.md, "The daemon's own event loop"):
#
#   bench/cpu-per-epoch.sh aklocd PATH-TO-aklocd LABEL [WINDOW-SECONDS]
#   bench/cpu-per-epoch.sh floor PATH-TO-akloc-bench LABEL [WINDOW-SECONDS]
#   bench/cpu-per-epoch.sh libgps-floor PATH-TO-akloc-bench LABEL [WINDOW-SECONDS]
#
# Its own gpsfake (bundg_zeus_9, -c 0.03, looping) on a free port, the daemon
# on a private socket, one subscriber (minInterval 0) that timestamps each
# fix; after 8 s of warm-up, utime+stime of /proc/PID/stat (every thread,
# the dead ones too) and perf stat's task-clock and context switches over
# the window, divided by the fixes received (one per epoch). Everything it
# starts is stopped by pid and its directory removed.
set -u
kind=$1; bin=$2; label=$3; window=${4:-30}
log=${GPSD_LOG:-/work/shared/gpsd-logs/bundg_zeus_9.log}
d=$(mktemp -d /tmp/akloc-cpu-epoch.XXXXXX)
pids=()
# shellcheck source=scripts/stop-started.sh
. "$(dirname "$0")/../scripts/stop-started.sh"
cleanup() {
    stop_started "${port:-0}" "${pids[@]}"
    rm -rf "$d"
}
trap cleanup EXIT
cat > "$d/sub.py" <<'PY'
import socket, sys, time
path, mode, out = sys.argv[1], sys.argv[2], sys.argv[3]
for _ in range(300):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); break
    except OSError:
        time.sleep(0.05)
if mode == "aklocd":
    s.sendall(b'{"id":1,"op":"startUpdatingLocation","policy":{"minInterval":0}}\n')
f = open(out, "w", buffering=1)
buf = b""
while True:
    d = s.recv(65536)
    if not d: break
    buf += d
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        if b"TPV" in line or b"latitude" in line:
            f.write("%f\n" % time.monotonic())
PY
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
TMPDIR=$d gpsfake -p -q -c 0.03 -P "$port" "$log" > "$d/gpsfake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
sleep 1
: > "$d/akloc.conf"
if [ "$kind" = aklocd ]; then
    "$bin" --socket "$d/s.sock" --gpsd "127.0.0.1:$port" --config "$d/akloc.conf" --state-dir "$d/state" \
        --log-level warning 2> "$d/daemon.err" &
else
    "$bin" "$kind" "$port" "$d/s.sock" 2> "$d/daemon.err" &
fi
pid=$!
pids=("$pid" "${pids[@]}")
python3 "$d/sub.py" "$d/s.sock" "$kind" "$d/fixes" &
pids=($! "${pids[@]}")
sleep 8
t0=$(awk '{print $14+$15}' "/proc/$pid/stat"); n0=$(wc -l < "$d/fixes")
perf stat -e task-clock,context-switches -p "$pid" -x, -o "$d/perf" -- sleep "$window"
t1=$(awk '{print $14+$15}' "/proc/$pid/stat"); n1=$(wc -l < "$d/fixes")
python3 - "$label" "$t0" "$t1" "$n0" "$n1" "$(getconf CLK_TCK)" "$d/perf" "/proc/$pid" <<'PY'
import sys
label, t0, t1, n0, n1, tck, perf, proc = sys.argv[1:]
epochs = max(1, int(n1) - int(n0))
counters = {line.split(",")[2]: float(line.split(",")[0]) for line in open(perf) if line.count(",") > 3}
status = dict(line.split(":", 1) for line in open(proc + "/status"))
print("%s cpu_ms_per_epoch=%.3f task_clock_ms_per_epoch=%.3f ctxsw_per_epoch=%.1f epochs=%d VmHWM_kB=%s threads=%s load=%s"
      % (label, (float(t1) - float(t0)) * 1000 / int(tck) / epochs, counters.get("task-clock", 0) / epochs,
         counters.get("context-switches", 0) / epochs, epochs, status["VmHWM"].split()[0], status["Threads"].strip(),
         open("/proc/loadavg").read().split()[0]))
PY
