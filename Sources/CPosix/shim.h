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
#endif
