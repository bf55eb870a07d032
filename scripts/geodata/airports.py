"""Tests/Fixtures/geo/airports-icao.csv: the independent reference for the lookups.

Every airport of PyPI airportsdata (MIT; ICAO-keyed, with its ISO country
and IANA zone), which the lookups' data was not derived from. The tests
measure how often the border and zone files agree with it.
"""

import pathlib

import airportsdata

ORDER = 90


def build(data_dir):
    out = pathlib.Path(data_dir).parent / "Tests" / "Fixtures" / "geo"
    out.mkdir(parents=True, exist_ok=True)
    airports = airportsdata.load("ICAO")
    lines = ["icao,latitude,longitude,country,tz"]
    for icao in sorted(airports):
        a = airports[icao]
        if not a["country"] or not a["tz"]:
            continue
        lines.append(f"{icao},{float(a['lat']):.6f},{float(a['lon']):.6f},{a['country']},{a['tz']}")
    (out / "airports-icao.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "airports-icao.csv.LICENSE").write_text(
        "airports-icao.csv is derived from airportsdata "
        f"{airportsdata.__version__} (PyPI), MIT licence, copyright (c) 2020- Mike Borsetti,\n"
        "which includes data from https://github.com/mwgg/Airports (MIT, copyright (c) 2014 mwgg).\n"
        "Columns: ICAO code, latitude, longitude, ISO 3166-1 country, IANA time zone.\n",
        encoding="utf-8")
    print(f"  airports-icao.csv: {len(lines) - 1} airports (airportsdata {airportsdata.__version__})")
