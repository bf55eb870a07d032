# Sourced by the scripts that start gpsfake, aklocd and the like.
#
# stop_started PORT PID...: stops each process, its children first (gpsfake
# leaves its gpsd child running when killed), waits for them, and removes the
# SysV shared-memory segments gpsd 3.22 leaves behind: the one keyed
# 0x4770<port>, and as root its NTP0..NTP7 ones (0x4e545030..7). The NTP keys
# are shared by every gpsd on the machine, so those go only when no process
# is attached (as Tests/AklocTestSupport's SharedMemory does).
stop_started() {
    local port=$1 pid id key
    shift
    for pid in "$@"; do
        pkill -TERM -P "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    key=$(printf '0x4770%04x' "$port")
    for id in $(ipcs -m | awk -v k="$key" -v root="$([ "$(id -u)" = 0 ] && echo 1)" \
        '$1 == k || (root && $1 ~ /^0x4e54503[0-7]$/ && $6 == 0) {print $2}'); do
        ipcrm -m "$id" 2>/dev/null || true
    done
}
