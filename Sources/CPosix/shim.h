#ifndef AKLOC_CPOSIX_SHIM_H
#define AKLOC_CPOSIX_SHIM_H
// glibc >= 2.32 has these, but only under _GNU_SOURCE, which the Glibc module
// is not built with. Both return static strings, so they are thread-safe,
// unlike strerror(3).
extern const char *strerrorname_np(int errnum);
extern const char *strerrordesc_np(int errnum);
// Not in the Glibc module at all: the one epoll instance AklocPosix's
// EventPoller runs per dispatch queue.
#include <sys/epoll.h>
// accept4(2) is _GNU_SOURCE too: accept with SOCK_NONBLOCK | SOCK_CLOEXEC in
// one call, so no accepted descriptor leaks into a child between two calls.
// Declared by hand (socklen_t is unsigned int): including <sys/socket.h>
// here would hand its declarations to this module instead of Glibc's.
struct sockaddr;
extern int accept4(int sockfd, struct sockaddr *addr, unsigned int *addrlen, int flags);
// eventfd(2), not in the Glibc module: EventLoop's wake-up from other threads.
// By hand for the same reason (flags are O_CLOEXEC and O_NONBLOCK's values).
extern int eventfd(unsigned int initval, int flags);
// libdispatch's main-queue hooks, the ones CoreFoundation's RunLoop drains the
// main queue with on Linux (exported by libdispatch.so and libdispatch.a; not
// in its public headers): an eventfd that is readable while main-queue work
// is pending, and the call that runs that work on the calling (main) thread.
// aklocd's EventLoop waits on the first and calls the second (EventLoop.swift).
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *_Nullable msg);
#endif
