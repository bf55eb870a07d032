#ifndef AKLOC_CSYSTEMD_SHIM_H
#define AKLOC_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#endif
