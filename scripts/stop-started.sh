# Sourced by the scripts that start gpsfake, aklocd and the like.
#
# stop_started PORT PID...: stops each process, its children first (gpsfake
# leaves its gpsd child running when killed), waits for them, and removes the
# SysV shared-memory segment gpsd 3.22 leaves behind, keyed 0x4770<port>.
stop_started() {
    local port=$1 pid id key
    shift
    for pid in "$@"; do
        pkill -TERM -P "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    key=$(printf '0x4770%04x' "$port")
    for id in $(ipcs -m | awk -v k="$key" '$1 == k {print $2}'); do ipcrm -m "$id" 2>/dev/null || true; done
}
