"""data/zone-countries.tsv: the time zones that lie in one country.

timezone-boundary-builder draws its zones from OpenStreetMap's borders,
which are far more precise than Natural Earth's 1:10m ones (whose borders
are off by several hundred metres; airports near borders show it), and its
zones stop at the 12-nautical-mile territorial sea. Most zones lie in one
country. Where they do, the country of a point is the country of its zone;
elsewhere (zones shared by several countries, such as Asia/Bangkok or
Europe/Belgrade, and the oceans' Etc zones) Natural Earth decides.

A zone is one country's when two independent sources agree: Debian
tzdata's zone.tab names that country for the zone, and at least 90 % of
the zone's land (Natural Earth's) is that country's, the rest being the
slivers where the two sets of borders differ. Areas are in square degrees
weighted by cos(latitude) per part, which is enough for ratios.
"""

import json
import math

import shapely
import shapely.geometry as sg
import tzfpy
from shapely.ops import unary_union
from shapely.strtree import STRtree

import borders
import zonetab

ORDER = 25
SHARE = 0.90


def weighted_area(geometry):
    total = 0.0
    for polygon in getattr(geometry, "geoms", [geometry]):
        if polygon.is_empty or polygon.geom_type not in ("Polygon", "MultiPolygon"):
            continue
        if polygon.geom_type == "MultiPolygon":
            total += weighted_area(polygon)
            continue
        total += polygon.area * math.cos(math.radians(polygon.centroid.y))
    return total


def build(data_dir):
    regions, _ = borders.country_regions()
    codes = [code for code, _ in regions]
    countries = [shapely.make_valid(geometry) for _, geometry in regions]
    tree = STRtree(countries)
    zone_tab = zonetab.country_of_zone()
    lines = ["# zone\tcountry: zones that lie in one country (scripts/geodata/zonecountries.py)"]
    shared = []
    for name in sorted(tzfpy.timezonenames()):
        if name.startswith("Etc/"):
            continue
        collection = json.loads(tzfpy.get_tz_polygon_geojson(name))
        zone = unary_union([shapely.make_valid(sg.shape(f["geometry"])) for f in collection["features"]])
        overlaps = {}
        for hit in tree.query(zone, predicate="intersects"):
            area = weighted_area(zone.intersection(countries[int(hit)]))
            if area > 0:
                overlaps[int(hit)] = area
        if not overlaps:
            shared.append(f"{name} (no land)")
            continue
        land = sum(overlaps.values())
        main = max(overlaps, key=overlaps.get)
        if codes[main] == zone_tab.get(name) and overlaps[main] >= SHARE * land:
            lines.append(f"{name}\t{codes[main]}")
        else:
            parts = ", ".join(f"{codes[i]} {a / land:.1%}" for i, a in sorted(overlaps.items(), key=lambda x: -x[1])[:4])
            shared.append(f"{name} ({parts}; zone.tab {zone_tab.get(name, 'none')})")
    (data_dir / "zone-countries.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data_dir / "zone-countries.notes.txt").write_text(
        "Zones left to Natural Earth (shared, not zone.tab's country, or no land):\n" + "\n".join(shared) + "\n",
        encoding="utf-8")
    print(f"  zone-countries.tsv: {len(lines) - 1} single-country zones, {len(shared)} left to Natural Earth")
