#ifndef AKLOC_CGPS_SHIM_H
#define AKLOC_CGPS_SHIM_H
#include <gps.h>
#include <stdint.h>

// gps.h spells its masks as `(1llu<<N)` and its watch flags with a `u`
// suffix; Swift's importer does not reliably turn such macros into
// constants, so they are re-exported here as typed values.
static const uint64_t akloc_TIME_SET = TIME_SET;
static const uint64_t akloc_LATLON_SET = LATLON_SET;
static const uint64_t akloc_ALTITUDE_SET = ALTITUDE_SET;
static const uint64_t akloc_SPEED_SET = SPEED_SET;
static const uint64_t akloc_TRACK_SET = TRACK_SET;
static const uint64_t akloc_CLIMB_SET = CLIMB_SET;
static const uint64_t akloc_STATUS_SET = STATUS_SET;
static const uint64_t akloc_MODE_SET = MODE_SET;
static const uint64_t akloc_HERR_SET = HERR_SET;
static const uint64_t akloc_VERR_SET = VERR_SET;
static const uint64_t akloc_SPEEDERR_SET = SPEEDERR_SET;
static const uint64_t akloc_TRACKERR_SET = TRACKERR_SET;
static const uint64_t akloc_CLIMBERR_SET = CLIMBERR_SET;
static const uint64_t akloc_VERSION_SET = VERSION_SET;
static const uint64_t akloc_SATELLITE_SET = SATELLITE_SET;
static const uint64_t akloc_DOP_SET = DOP_SET;
static const int akloc_MAXCHANNELS = MAXCHANNELS;
static const uint64_t akloc_ERROR_SET = ERROR_SET;
static const uint64_t akloc_PACKET_SET = PACKET_SET;

static const unsigned int akloc_WATCH_ENABLE = WATCH_ENABLE;
static const unsigned int akloc_WATCH_DISABLE = WATCH_DISABLE;
static const unsigned int akloc_WATCH_JSON = WATCH_JSON;

static const int akloc_MODE_NOT_SEEN = MODE_NOT_SEEN;
static const int akloc_MODE_NO_FIX = MODE_NO_FIX;
static const int akloc_MODE_2D = MODE_2D;
static const int akloc_MODE_3D = MODE_3D;

#endif
