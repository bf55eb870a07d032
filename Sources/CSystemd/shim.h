#ifndef AKLOC_CSYSTEMD_SHIM_H
#define AKLOC_CSYSTEMD_SHIM_H
// Without this, sd-journal.h turns sd_journal_sendv into a macro that adds
// CODE_FILE/CODE_LINE of this header, which would be noise in every entry.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>

// glibc >= 2.32 has these, but only under _GNU_SOURCE, which the Glibc module
// is not built with. Both return static strings, so they are thread-safe,
// unlike strerror(3).
extern const char *strerrorname_np(int errnum);
extern const char *strerrordesc_np(int errnum);
#endif
