#!/bin/sh
# Fails if a module other than AklocPosix calls a raw system call (issue 19:
# "no module but AklocPosix calls raw syscalls"; DESIGN §1: C at the edge,
# every syscall through one EINTR-retrying helper, in one leaf module).
#
#   scripts/check-raw-syscalls.sh [build-dir]
#
# Reads the undefined symbols of each Swift object file SwiftPM compiled for
# Sources/<Module>/<File>.swift (nm -u): a call to read(2) from Swift leaves
# an undefined `read`, while Swift methods of the same name are mangled, so
# this sees calls, not words. Only objects of files that exist now count (a
# stale object of a moved file is ignored). Without an argument it checks
# SwiftPM's debug build directory.
set -eu
cd "$(dirname "$0")/.."
build=${1:-$(swift build --show-bin-path)}
if [ ! -d "$build" ]; then
    echo "check-raw-syscalls: $build is not a build directory (build first)" >&2
    exit 2
fi

# The calls only AklocPosix may make.
syscalls='socket socketpair bind listen accept accept4 connect shutdown
read write pread pwrite readv writev recv send recvfrom sendto recvmsg sendmsg
close open openat creat pipe pipe2 dup dup2 dup3 fcntl ioctl
poll ppoll select pselect epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait
setsockopt getsockopt getrlimit setrlimit prlimit
fsync fdatasync ftruncate truncate fstat stat lstat access
unlink unlinkat rename renameat mkdir mkdtemp mkstemp rmdir chmod fchmod chown fchown umask
mmap munmap eventfd timerfd_create timerfd_settime signalfd inotify_init1'

# Signals: dispositions, masks and kill go through AklocPosix's Signal,
# SignalSet and SignalMask (Signals.swift), in every file, the exempt ones too.
signals='signal sigaction sigprocmask pthread_sigmask sigemptyset sigfillset sigaddset
sigdelset sigismember sigpending sigtimedwait sigwait sigwaitinfo sigsuspend kill killpg raise'

# Modules and files exempt: AklocPosix is the one that may; the C shims
# have no Swift; GPSDSource/LibGPSConnection are libgps's edge, owned by the
# gpsd fast path (issue 19), which moves them behind AklocPosix itself (for
# descriptor calls; their signal calls are checked like everyone's).
exempt_module() {
    case "$1" in AklocPosix | C*) return 0 ;; esac
    return 1
}
exempt_file() {
    case "$1" in AklocGPSD/LibGPSConnection.swift | AklocGPSD/GPSDSource.swift) return 0 ;; esac
    return 1
}

anchored() { echo "$@" | tr ' ' '\n' | sed 's/.*/^&$/' | paste -sd'|' -; }
pattern=$(anchored $syscalls $signals)
signal_pattern=$(anchored $signals)
failures=0
checked=0
for dir in Sources/*/; do
    module=$(basename "$dir")
    exempt_module "$module" && continue
    objects="$build/$(echo "$module" | tr '-' '_').build"
    for source in $(find "$dir" -name '*.swift' | sort); do
        file=${source#Sources/}
        calls=$pattern
        exempt_file "$file" && calls=$signal_pattern
        object="$objects/$(basename "$source").o"
        if [ ! -f "$object" ]; then
            echo "check-raw-syscalls: no object for $source in $objects (build first)" >&2
            exit 2
        fi
        checked=$((checked + 1))
        found=$(nm -u "$object" | awk '{print $NF}' | grep -E "$calls" | sort -u | paste -sd' ' - || true)
        if [ -n "$found" ]; then
            echo "check-raw-syscalls: $source calls $found: use AklocPosix (Syscall, FileDescriptor, UnixStreamSocket, Signal, SignalMask, ...)" >&2
            failures=$((failures + 1))
        fi
    done
done
if [ "$failures" -gt 0 ]; then
    echo "check-raw-syscalls: $failures file(s) outside AklocPosix call raw system calls" >&2
    exit 1
fi
echo "check-raw-syscalls: $checked Swift files outside AklocPosix make no raw system call"
