#define _GNU_SOURCE
#include "CBench.h"

#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

int cbench_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cbench_epoll_add(int epoll, int fd, uint64_t token) {
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int cbench_epoll_remove(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int cbench_epoll_wait(int epoll, uint64_t *tokens, int capacity, int timeout_ms) {
    // Large enough that one wake-up reports every ready socket of a run.
    static struct epoll_event events[CBENCH_MAX_EVENTS];
    if (capacity > CBENCH_MAX_EVENTS) capacity = CBENCH_MAX_EVENTS;
    int ready = epoll_wait(epoll, events, capacity, timeout_ms);
    for (int i = 0; i < ready; i++) tokens[i] = events[i].data.u64;
    return ready;
}

int cbench_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cbench_enable_timestamps(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

static int64_t nanos(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

long cbench_recv_timestamped(int fd, void *buffer, unsigned long length, int64_t *monotonic_ns) {
    char control[CMSG_SPACE(sizeof(struct timespec))];
    struct iovec vector = {.iov_base = buffer, .iov_len = length};
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    *monotonic_ns = -1;
    long count = recvmsg(fd, &message, MSG_DONTWAIT);
    if (count <= 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec stamp;
            memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
            int64_t realtime = (int64_t)stamp.tv_sec * 1000000000 + stamp.tv_nsec;
            *monotonic_ns = realtime - (nanos(CLOCK_REALTIME) - nanos(CLOCK_MONOTONIC));
        }
    }
    return count;
}
