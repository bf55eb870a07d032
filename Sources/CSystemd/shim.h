#ifndef AKLOC_CSYSTEMD_SHIM_H
#define AKLOC_CSYSTEMD_SHIM_H
// Without this, sd-journal.h turns sd_journal_sendv into a macro that adds
// CODE_FILE/CODE_LINE of this header, which would be noise in every entry.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#include <systemd/sd-bus.h>
#endif
