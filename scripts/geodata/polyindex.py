"""The polygon-index file format shared by data/borders.bin and data/timezones.bin.

Read by Sources/AklocGeo/PolygonIndex.swift; docs/geodata.md describes it.
All integers little-endian. Coordinates are int32 in 1e-7 degree units
(about 1 cm), x = longitude, y = latitude.

Header (64 bytes):
   0 magic "AKPI"           4 u32 version (1)        8 u32 file size
  12 u32 region count      16 u32 region table      20 u32 strings offset
  24 u32 strings length    28 u32 vertex offset     32 u32 vertex count
  36 u32 grid columns      40 u32 grid rows         44 u32 grid offset
  48 u32 nodes offset      52 u32 nodes length      56 u32 units per degree
  60 u32 ring table offset
Region table: per region u32 name offset (in strings), u16 name length, u16 0,
  u32 first ring, u32 ring count.
Ring table: per ring u32 first vertex, u32 vertex count (for a linear scan).
Vertices: rings one after another, each closed (last = first); edge i runs
  from vertex i to vertex i + 1 and never crosses from one ring to the next.
Grid: columns x rows u32 node offsets (relative to the nodes area), row-major
  from (-180, -90); cell size 360/columns x 180/rows degrees.
Node: u8 kind. Kind 1 (split): 4 x u32 child offsets, SW, SE, NW, NE, split
  at the integer midpoint floor((W + E) / 2), floor((S + N) / 2).
  Kind 0 (leaf): u16 entry count, then per entry: u16 region, u8 flags
  (bit 0: the reference point (W + 0.5, S + 0.5) units is inside the
  region), u16 run count, then runs of u32 first edge, u16 edge count: every
  edge of the region whose bounding box touches the cell (padded by a unit).
A point (x, y) of the leaf is inside a region when the reference status,
toggled by each edge crossing the path from the reference point east along
y = S + 0.5 to x, then north or south along x to y, says so (even-odd rule,
so holes and multi-part regions need nothing more).
"""

import struct

import numpy as np
import shapely
import shapely.geometry as sg
from shapely.strtree import STRtree

UNITS = 10_000_000
COLUMNS, ROWS = 180, 90  # 2-degree top cells
CELL = 360 * UNITS // COLUMNS
MAX_EDGES_PER_LEAF = 32
MAX_DEPTH = 10  # 2 degrees / 1024: about 200 m


def quantize_ring(coords):
    ring = []
    for lon, lat in coords:
        point = (int(round(lon * UNITS)), int(round(lat * UNITS)))
        point = (max(-180 * UNITS, min(180 * UNITS, point[0])), max(-90 * UNITS, min(90 * UNITS, point[1])))
        if not ring or ring[-1] != point:
            ring.append(point)
    if ring and ring[0] != ring[-1]:
        ring.append(ring[0])
    return ring if len(ring) >= 4 else None


def polygons_of(geometry):
    if geometry.is_empty:
        return []
    if geometry.geom_type == "Polygon":
        return [geometry]
    if geometry.geom_type in ("MultiPolygon", "GeometryCollection"):
        return [p for g in geometry.geoms for p in polygons_of(g)]
    return []


class Builder:
    def __init__(self, regions):
        """regions: list of (name, shapely geometry in degrees), names unique."""
        self.names = [name for name, _ in regions]
        vertices = []
        edge_region = []
        edge_first = []
        quantized = []
        self.rings = []
        self.region_rings = []
        for index, (_, geometry) in enumerate(regions):
            polys = []
            first_ring = len(self.rings)
            for polygon in polygons_of(geometry):
                rings = []
                if quantize_ring(polygon.exterior.coords) is None:
                    continue  # too small for a unit: its holes go with it
                for coords in [polygon.exterior.coords, *[i.coords for i in polygon.interiors]]:
                    ring = quantize_ring(coords)
                    if ring is None:
                        continue
                    start = len(vertices)
                    self.rings.append((start, len(ring)))
                    vertices.extend(ring)
                    edge_first.extend(range(start, start + len(ring) - 1))
                    edge_region.extend([index] * (len(ring) - 1))
                    rings.append(ring)
                if rings:
                    polys.append(sg.Polygon(rings[0], rings[1:]))
            quantized.append(sg.MultiPolygon(polys) if polys else None)
            self.region_rings.append((first_ring, len(self.rings) - first_ring))
        self.vertices = np.array(vertices, dtype=np.int64)
        self.edge_first = np.array(edge_first, dtype=np.int64)
        self.edge_region = np.array(edge_region, dtype=np.int64)
        a = self.vertices[self.edge_first]
        b = self.vertices[self.edge_first + 1]
        self.ax, self.ay, self.bx, self.by = a[:, 0], a[:, 1], b[:, 0], b[:, 1]
        self.minx, self.maxx = np.minimum(self.ax, self.bx), np.maximum(self.ax, self.bx)
        self.miny, self.maxy = np.minimum(self.ay, self.by), np.maximum(self.ay, self.by)
        self.fax, self.fay = self.ax.astype(np.float64), self.ay.astype(np.float64)
        self.fbx, self.fby = self.bx.astype(np.float64), self.by.astype(np.float64)
        valid = [i for i, g in enumerate(quantized) if g is not None]
        self.tree_regions = valid
        self.tree = STRtree([shapely.make_valid(quantized[i]) for i in valid])
        # Edges by top row, for the reference point's ray to the east.
        self.row_edges = {}
        row0 = np.clip((self.miny + 90 * UNITS) // CELL, 0, ROWS - 1)
        row1 = np.clip((self.maxy + 90 * UNITS) // CELL, 0, ROWS - 1)
        for row in range(ROWS):
            self.row_edges[row] = np.nonzero((row0 <= row) & (row1 >= row))[0]

    def reference_inside(self, region, x0, y0):
        """Even-odd ray cast east from (x0, y0) with the formula the Swift reader uses."""
        row = int(min(ROWS - 1, max(0, (y0 + 90 * UNITS) // CELL)))
        candidates = self.row_edges[row]
        candidates = candidates[self.edge_region[candidates] == region]
        ay, by = self.fay[candidates], self.fby[candidates]
        ax, bx = self.fax[candidates], self.fbx[candidates]
        crossing = (ay > y0) != (by > y0)
        ax, ay, bx, by = ax[crossing], ay[crossing], bx[crossing], by[crossing]
        xint = ax + (y0 - ay) * (bx - ax) / (by - ay)
        return int(np.count_nonzero(xint > x0)) % 2 == 1

    def leaf(self, west, south, east, north, edges):
        entries = []
        by_region = {}
        for edge in edges.tolist():
            by_region.setdefault(int(self.edge_region[edge]), []).append(edge)
        box = sg.box(west, south, east, north)
        for hit in self.tree.query(box, predicate="within"):
            region = self.tree_regions[int(hit)]
            if region not in by_region:
                by_region[region] = []
        for region in sorted(by_region):
            region_edges = sorted(by_region[region])
            if region_edges:
                inside = self.reference_inside(region, west + 0.5, south + 0.5)
            else:
                inside = True
            runs = []
            for edge in region_edges:
                first = int(self.edge_first[edge])
                if runs and runs[-1][0] + runs[-1][1] == first and runs[-1][1] < 0xFFFF:
                    runs[-1][1] += 1
                else:
                    runs.append([first, 1])
            entries.append((region, inside, runs))
        out = bytearray(struct.pack("<BH", 0, len(entries)))
        for region, inside, runs in entries:
            out += struct.pack("<HBH", region, 1 if inside else 0, len(runs))
            for first, count in runs:
                out += struct.pack("<IH", first, count)
        return bytes(out)

    def node(self, west, south, east, north, edges, depth):
        pad = 1
        keep = (
            (self.maxx[edges] >= west - pad) & (self.minx[edges] <= east + pad)
            & (self.maxy[edges] >= south - pad) & (self.miny[edges] <= north + pad)
        )
        edges = edges[keep]
        if len(edges) > MAX_EDGES_PER_LEAF and depth < MAX_DEPTH and east - west >= 2:
            mx, my = (west + east) // 2, (south + north) // 2
            children = [
                self.node(west, south, mx, my, edges, depth + 1),
                self.node(mx, south, east, my, edges, depth + 1),
                self.node(west, my, mx, north, edges, depth + 1),
                self.node(mx, my, east, north, edges, depth + 1),
            ]
            return ("split", children)
        return ("leaf", self.leaf(west, south, east, north, edges))

    def serialize(self):
        nodes = bytearray()
        interned = {}

        def emit(node):
            kind, payload = node
            if kind == "leaf":
                if payload not in interned:
                    interned[payload] = len(nodes)
                    nodes.extend(payload)
                return interned[payload]
            offsets = [emit(child) for child in payload]
            offset = len(nodes)
            nodes.extend(struct.pack("<BIIII", 1, *offsets))
            return offset

        col0 = np.clip((self.minx + 180 * UNITS) // CELL, 0, COLUMNS - 1)
        col1 = np.clip((self.maxx + 180 * UNITS) // CELL, 0, COLUMNS - 1)
        row0 = np.clip((self.miny + 90 * UNITS) // CELL, 0, ROWS - 1)
        row1 = np.clip((self.maxy + 90 * UNITS) // CELL, 0, ROWS - 1)
        grid = []
        for row in range(ROWS):
            in_row = np.nonzero((row0 <= row + 1) & (row1 >= row - 1))[0]
            for col in range(COLUMNS):
                near = in_row[(col0[in_row] <= col + 1) & (col1[in_row] >= col - 1)]
                west = -180 * UNITS + col * CELL
                south = -90 * UNITS + row * CELL
                grid.append(emit(self.node(west, south, west + CELL, south + CELL, near, 0)))

        strings = bytearray()
        table = bytearray()
        for name, (first_ring, ring_count) in zip(self.names, self.region_rings):
            encoded = name.encode("utf-8")
            table += struct.pack("<IHHII", len(strings), len(encoded), 0, first_ring, ring_count)
            strings += encoded
        ring_bytes = b"".join(struct.pack("<II", first, count) for first, count in self.rings)
        vertex_bytes = self.vertices.astype("<i4").tobytes()
        grid_bytes = struct.pack(f"<{len(grid)}I", *grid)

        header_size = 64
        region_table = header_size
        ring_table = region_table + len(table)
        strings_offset = ring_table + len(ring_bytes)
        vertex_offset = (strings_offset + len(strings) + 3) // 4 * 4
        grid_offset = vertex_offset + len(vertex_bytes)
        nodes_offset = grid_offset + len(grid_bytes)
        size = nodes_offset + len(nodes)
        header = struct.pack(
            "<4s15I",
            b"AKPI", 1, size, len(self.names), region_table, strings_offset, len(strings),
            vertex_offset, len(self.vertices), COLUMNS, ROWS, grid_offset, nodes_offset, len(nodes),
            UNITS, ring_table,
        )
        body = bytearray(header)
        body += table
        body += ring_bytes
        body += strings
        body += b"\0" * (vertex_offset - len(body))
        body += vertex_bytes
        body += grid_bytes
        body += nodes
        assert len(body) == size
        return bytes(body)


def write(path, regions):
    data = Builder(regions).serialize()
    path.write_bytes(data)
    return len(data)
