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
slivers where the two sets of borders differ. A zone smaller than
1 000 km² (territorial sea included) is zone.tab's country's whatever
Natural Earth says: those are the micro-states and exclaves whose own
borders the zone follows and that 1:10m draws coarsely or not at all
(Gibraltar, Monaco, San Marino, Vaduz, the Vatican, Büsingen, Gaza, Sint
Maarten's Dutch side). Areas are in square degrees weighted by
cos(latitude) per part, which is enough for ratios.

A shared zone lists the countries it may give: those with at least 5 % of
its land, and zone.tab's. Natural Earth decides among them; where Natural
Earth's land is another country's (a sliver where its border is off, such
as Jordan's 1.9 % of Asia/Jerusalem in the Arava valley), the nearest of
the listed countries is the answer (`CountryBorders`).
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
# km² of latitude-weighted square degrees' worth: below it a zone is
# zone.tab's country's (the micro-states and exclaves).
SMALL_ZONE_KM2 = 1_000
KM2_PER_SQUARE_DEGREE = 111.32 ** 2
# A shared zone's candidates: countries with at least this share of its land.
CANDIDATE_SHARE = 0.05


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
    lines = ["# zone\tcountries: the one country of a zone, or the comma-separated countries a shared zone may give"
             " (scripts/geodata/zonecountries.py)"]
    shared = []
    small_zones = []
    no_land = 0
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
            no_land += 1
            continue
        land = sum(overlaps.values())
        main = max(overlaps, key=overlaps.get)
        small = weighted_area(zone) * KM2_PER_SQUARE_DEGREE < SMALL_ZONE_KM2
        parts = ", ".join(f"{codes[i]} {a / land:.1%}" for i, a in sorted(overlaps.items(), key=lambda x: -x[1])[:4])
        if codes[main] == zone_tab.get(name) and overlaps[main] >= SHARE * land:
            lines.append(f"{name}\t{codes[main]}")
        elif small and zone_tab.get(name) in codes:
            lines.append(f"{name}\t{zone_tab[name]}")
            small_zones.append(f"{name} ({parts}; zone.tab {zone_tab[name]})")
        else:
            candidates = {codes[i] for i, a in overlaps.items() if a >= CANDIDATE_SHARE * land}
            if zone_tab.get(name) in codes:
                candidates.add(zone_tab[name])
            lines.append(f"{name}\t{','.join(sorted(candidates))}")
            shared.append(f"{name} ({parts}; zone.tab {zone_tab.get(name, 'none')}) -> {','.join(sorted(candidates))}")
    (data_dir / "zone-countries.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data_dir / "zone-countries.notes.txt").write_text(
        "Shared zones (Natural Earth decides among the listed countries), and zones with no land:\n"
        + "\n".join(shared) + "\n\nZones under 1 000 km2, zone.tab's country whatever Natural Earth says:\n"
        + "\n".join(small_zones) + "\n",
        encoding="utf-8")
    print(f"  zone-countries.tsv: {len(lines) - 1 - len(shared) + no_land} single-country zones"
          f" ({len(small_zones)} small), {len(shared) - no_land} shared")
