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
#endif
