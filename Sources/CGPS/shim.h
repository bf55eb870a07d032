#ifndef AKLOC_CGPS_SHIM_H
#define AKLOC_CGPS_SHIM_H
#include <gps.h>
#endif
