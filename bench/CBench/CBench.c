#define _GNU_SOURCE
#include "CBench.h"

#include <stddef.h>
#include <sys/epoll.h>
#include <sys/socket.h>

int cbench_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cbench_epoll_add(int epoll, int fd, uint64_t token) {
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = token};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int cbench_epoll_remove(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int cbench_epoll_wait(int epoll, uint64_t *tokens, int capacity, int timeout_ms) {
    struct epoll_event events[1024];
    if (capacity > 1024) capacity = 1024;
    int ready = epoll_wait(epoll, events, capacity, timeout_ms);
    for (int i = 0; i < ready; i++) tokens[i] = events[i].data.u64;
    return ready;
}

int cbench_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
