// SQLite 3 (Debian libsqlite3-dev), for `akloc map --tiles FILE.mbtiles` only (docs/map.md).
#include <sqlite3.h>
