// epoll and accept4 for akloc-bench: Swift's Glibc module does not export
// <sys/epoll.h>, and struct epoll_event is packed on x86-64, so the harness
// goes through these small wrappers.
#ifndef CBENCH_H
#define CBENCH_H

#include <stdint.h>

/// The most ready sockets one cbench_epoll_wait reports (it is not reentrant).
#define CBENCH_MAX_EVENTS 32768

int cbench_epoll_create(void);
/// Watches `fd` for input; `token` comes back from cbench_epoll_wait.
int cbench_epoll_add(int epoll, int fd, uint64_t token);
int cbench_epoll_remove(int epoll, int fd);
/// Waits like epoll_wait and stores the ready tokens in `tokens` (at most `capacity`).
int cbench_epoll_wait(int epoll, uint64_t *tokens, int capacity, int timeout_ms);
/// Turns on SO_TIMESTAMPNS (kernel receive times; TCP supports it, AF_UNIX streams do not).
int cbench_enable_timestamps(int fd);
/// recv() that also returns the kernel receive time of the last segment read,
/// converted to CLOCK_MONOTONIC nanoseconds (-1 when there is none).
long cbench_recv_timestamped(int fd, void *buffer, unsigned long length, int64_t *monotonic_ns);
/// accept4(SOCK_NONBLOCK | SOCK_CLOEXEC) without the peer address.
int cbench_accept_nonblocking(int listener);
/// The floor with libgps as its reader (LibgpsFloor.c): serves `listener` forever; returns only
/// when gpsd on 127.0.0.1:`port` cannot be reached (69) or goes away (0).
int cbench_libgps_floor(int listener, const char *port);

#endif
