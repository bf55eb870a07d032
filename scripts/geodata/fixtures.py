"""Writes the geo test fixtures under Tests/Fixtures/geo/ (docs/geodata.md).

- airports.csv: every airport with an IATA code from PyPI `airportsdata`
  (MIT): code, city, country, latitude, longitude, time zone. An independent
  reference for reverse geocoding: its cities and countries were not derived
  from GeoNames' populated places.
- ijsselmeer-track.csv: the fixes (mode >= 2) of gpsd's bundg_zeus_9 capture
  (BSD-2-Clause, a boat on the IJsselmeer off Enkhuizen), for region tests.

Usage: python3 scripts/geodata/fixtures.py [--gpsd-logs DIR]
"""

import argparse
import csv
import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "Fixtures", "geo")


def write(name: str, header: list, rows: list) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="") as f:
        f.write(buffer.getvalue())
    print(f"fixtures: {len(rows)} rows -> {os.path.relpath(os.path.join(OUT, name), ROOT)}")


def airports() -> None:
    import airportsdata

    rows = []
    for code, a in sorted(airportsdata.load("IATA").items()):
        if not a["city"] or not a["country"] or len(a["country"]) != 2:
            continue
        rows.append([code, a["city"], a["country"], f"{a['lat']:.6f}", f"{a['lon']:.6f}", a["tz"]])
    write("airports.csv", ["iata", "city", "country", "latitude", "longitude", "tz"], rows)


def track(logs: str) -> None:
    rows = []
    with open(os.path.join(logs, "bundg_zeus_9.log.chk"), encoding="utf-8") as f:
        for line in f:
            if '"class":"TPV"' not in line:
                continue
            tpv = json.loads(line)
            if tpv.get("mode", 0) < 2 or "lat" not in tpv or "lon" not in tpv:
                continue
            eph = tpv.get("eph")
            rows.append([f"{tpv['lat']:.9f}", f"{tpv['lon']:.9f}", "" if eph is None else f"{eph:.3f}"])
    write("ijsselmeer-track.csv", ["latitude", "longitude", "eph"], rows)


ORDER = 90


def build(data_dir) -> None:
    """The scripts/update-geodata step."""
    global OUT
    root = os.path.dirname(os.path.abspath(str(data_dir)))
    OUT = os.path.join(root, "Tests", "Fixtures", "geo")
    os.makedirs(OUT, exist_ok=True)
    airports()
    logs = os.path.join(root, "..", "shared", "gpsd-logs")
    if os.path.exists(os.path.join(logs, "bundg_zeus_9.log.chk")):
        track(logs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpsd-logs", default=os.path.join(ROOT, "..", "shared", "gpsd-logs"))
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    airports()
    if os.path.exists(os.path.join(args.gpsd_logs, "bundg_zeus_9.log.chk")):
        track(args.gpsd_logs)
    else:
        print(f"fixtures: no bundg_zeus_9.log.chk in {args.gpsd_logs}; track kept as it is")
    return 0


if __name__ == "__main__":
    sys.exit(main())
