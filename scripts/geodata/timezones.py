"""data/timezones.bin: IANA time-zone boundaries (timezone-boundary-builder, ODbL).

From PyPI tzfpy, which ships the timezone-boundary-builder polygons (with
the oceans' Etc/GMT zones) and exports each zone as GeoJSON. The derived
file is under the ODbL like its source (data/timezones.bin.LICENSE).
"""

import json

import shapely
import shapely.geometry as sg
import tzfpy
from shapely.ops import unary_union

import polyindex

ORDER = 20
TOLERANCE = 0.0005  # degrees, as the borders


def build(data_dir):
    regions = []
    for name in sorted(tzfpy.timezonenames()):
        collection = json.loads(tzfpy.get_tz_polygon_geojson(name))
        geometry = unary_union([shapely.make_valid(sg.shape(f["geometry"])) for f in collection["features"]])
        regions.append((name, geometry.simplify(TOLERANCE, preserve_topology=True)))
    size = polyindex.write(data_dir / "timezones.bin", regions)
    print(f"  timezones.bin: {len(regions)} zones from timezone-boundary-builder {tzfpy.data_version()}, {size} bytes")
