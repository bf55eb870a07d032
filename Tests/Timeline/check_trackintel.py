"""akloc's visits against an independent implementation: trackintel 1.4.2's
sliding staypoints (Li et al. 2008) on the same real fixes (docs/timeline.md,
"Checked against trackintel").

Days are stitched from real receiver captures (gpsd's regression logs,
Tests/Fixtures/timeline/captures.json, BSD-2-Clause): each stay a still
receiver's capture looped for its length, each trip a chain of moving
captures (rotated, joined end to start, their own times and speeds). The
days go into a real aklocd with `akloc track import` and come back with
`akloc timeline --json`; trackintel's generate_staypoints(method="sliding",
dist_threshold=100, time_threshold=5) runs on the same points. A staypoint
agrees when a visit has its arrival and departure within 60 s. Some days
hold what akloc treats differently on purpose (a gap in a stay, a receiver's
wild fix): they count like any other, and are listed.

Real recorded hikes join them (gpxpy 1.6.2's test tracks, Apache-2.0,
Tests/Fixtures/timeline/LICENSE-gpxpy.txt): each on its own real day, where
the hiker's stops are the staypoints, and each again as the trip of a day
between two still receivers' stays. The agreement counts all of them; each
difference is reported with its kind (the same stop with other bounds, a
gap, the end of the fixes).

Then each still capture looped for six hours must be one visit and no trip.

Usage: check_trackintel.py BIN_DIR [REPORT]. Exit 1 when below 95 % on the
stitched days of captures, or below 95 % on all the days leaving out the
staypoints a gap in the fixes explains (akloc keeps one visit across a gap
inside a stop, and makes a trip of a lone fix and a jump across a gap, on
purpose: docs/timeline.md), when a trackintel staypoint has no akloc visit
overlapping it and no gap to explain it, or when a looped still capture is
not one visit and no trip."""

import datetime
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
import xml.etree.ElementTree as ElementTree

import geopandas
import pandas
import trackintel

# trackintel warns of each stretch without a staypoint (the looped still receivers).
warnings.filterwarnings("ignore", message="No staypoints can be generated")
HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.abspath(os.path.join(HERE, "..", ".."))
CAPTURES = json.load(open(os.path.join(REPOSITORY, "Tests", "Fixtures", "timeline", "captures.json")))
EARTH = 6_371_008.8
MONTH = datetime.datetime(2026, 10, 1, 5, 0, tzinfo=datetime.timezone.utc).timestamp()
TOLERANCE = 60.0
REQUIRED = 0.95
# trackintel's gap_threshold (15 min): after a longer gap its window begins again.
TRACKINTEL_GAP = 15 * 60
# Enkhuizen, so the days have Dutch names and a time zone.
HOME = (52.7033, 5.2917)
# A still receiver whose fixes glitch (quectel-eg25-g, 93 m/s): a stay of
# every tenth day, for the wild-fix rules.
JITTERY = {"quectel-eg25-g"}
# Real hikes with times, from gpxpy 1.6.2's sdist (Apache-2.0): Cerknica lake
# (2010-08-05, 2 h) and Korita to Zbevnica (2010-10-03, 3.7 h).
HIKES = ["cerknicko-jezero", "korita-zbevnica"]


def hike(name):
    """A hike's track points that have a time, as (time, lat, lon) in time
    order. korita-zbevnica's first track (358 points) has no times: akloc
    passes a point without its time over (it cannot be placed in the
    journal) and trackintel could not order it, so both see only the timed
    ones. The times are needed here anyway: each hike is shifted in time."""
    root = ElementTree.parse(os.path.join(REPOSITORY, "Tests", "Fixtures", "timeline", name + ".gpx")).getroot()
    namespace = root.tag[:root.tag.index("}") + 1]
    points = []
    for point in root.iter(namespace + "trkpt"):
        time_element = point.find(namespace + "time")
        if time_element is not None:
            points.append((parse(time_element.text), float(point.get("lat")), float(point.get("lon"))))
    return sorted(points)


def offset(lat, lon, east, north):
    return (lat + north / EARTH * 180 / math.pi,
            lon + east / (EARTH * math.cos(math.radians(lat))) * 180 / math.pi)


def metres(origin, point):
    """East and north metres of point from origin (equirectangular)."""
    return ((point[1] - origin[1]) * math.pi / 180 * EARTH * math.cos(math.radians(origin[0])),
            (point[0] - origin[0]) * math.pi / 180 * EARTH)


class Day:
    def __init__(self, start, rng):
        self.t = start
        self.position = HOME
        self.points = []  # (time, lat, lon)
        self.rng = rng
        self.stays = []  # (capture, arrival, departure, gap)
        self.hike = None  # the hike this day holds, if any

    def stay(self, name, seconds, gap=0.0):
        fixes = CAPTURES["still"].get(name) or CAPTURES["moving"][name]
        # The capture's jitter around its own mean, put where the day is.
        mean = (sum(f[1] for f in fixes) / len(fixes), sum(f[2] for f in fixes) / len(fixes))
        first = self.t + 1
        elapsed = 0.0
        gap_at = seconds / 2 if gap else None
        while elapsed < seconds:
            base = self.t + 1
            for f in fixes:
                east, north = metres(mean, (f[1], f[2]))
                lat, lon = offset(self.position[0], self.position[1], east, north)
                self.points.append((base + f[0], lat, lon))
            self.t = base + fixes[-1][0]
            elapsed = self.t - first
            if gap_at is not None and elapsed >= gap_at:
                # The receiver off (indoors): no fixes, then the same place.
                self.t += gap
                gap_at = None
        self.stays.append((name, first, self.t, gap))

    def trip(self, pieces):
        # A drive somewhere: each piece turned to about the trip's heading
        # (its own wiggles kept), so the captures add up to a way away.
        heading = self.rng.uniform(0, 2 * math.pi)
        for name in pieces:
            fixes = CAPTURES["moving"][name]
            origin = (fixes[0][1], fixes[0][2])
            east, north = metres(origin, (fixes[-1][1], fixes[-1][2]))
            angle = heading - math.atan2(north, east) + self.rng.uniform(-0.35, 0.35)
            base = self.t + 1
            for f in fixes:
                east, north = metres(origin, (f[1], f[2]))
                east, north = (east * math.cos(angle) - north * math.sin(angle),
                               east * math.sin(angle) + north * math.cos(angle))
                lat, lon = offset(self.position[0], self.position[1], east, north)
                self.points.append((base + f[0], lat, lon))
            self.t = base + fixes[-1][0]
            self.position = (self.points[-1][1], self.points[-1][2])

    def walk(self, name):
        """A real hike as the way from here: its own times (shifted to now)
        and places; the day goes on from where it ended."""
        points = hike(name)
        base = self.t + 1 - points[0][0]
        self.points += [(base + t, lat, lon) for t, lat, lon in points]
        self.t = base + points[-1][0]
        self.position = points[-1][1:]
        self.hike = name


def hike_day(name):
    """The hike on its own real day, as recorded."""
    day = Day(0, None)
    day.points = hike(name)
    day.t = day.points[-1][0]
    day.hike = name
    return day


def stitched_hike_days(first, start):
    """Each hike as the trip between two still receivers' stays, on days
    after the stitched month (its own seeded choices, so the month's days
    stay as they were)."""
    rng = random.Random(29)
    still = [name for name in CAPTURES["still"] if name not in JITTERY]
    days = []
    for index, name in enumerate(HIKES):
        day = Day(start + (first + index) * 86_400, rng)
        day.position = hike(name)[0][1:]
        day.stay(rng.choice(still), rng.uniform(20, 90) * 60)
        day.walk(name)
        day.stay(rng.choice(still), rng.uniform(20, 90) * 60)
        days.append(day)
    return days


def iso(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def gpx(points, path):
    with open(path, "w") as file:
        file.write('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="check_trackintel" '
                   'xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\n')
        for t, lat, lon in points:
            file.write(f'<trkpt lat="{lat:.8f}" lon="{lon:.8f}"><time>{iso(t)}</time></trkpt>\n')
        file.write("</trkseg></trk></gpx>\n")


def build_days(count, seed):
    rng = random.Random(seed)
    still = [name for name in CAPTURES["still"] if name not in JITTERY]
    # Trips are the drives: nl2008u is trimmed to 9 fixes over 22 min with a
    # 20 min hole (a gap, not a drive), and haicom-305N's "moves" stay within
    # 46 m of its first fix: at a 100 m radius it is a receiver standing still.
    moving = ["bundg_zeus_9", "humminbird-M37"]
    still.append("haicom-305N")
    days = []
    for index in range(count):
        day = Day(MONTH + index * 86_400, rng)
        for stop in range(rng.randint(3, 6)):
            name = rng.choice(still)
            gap = 0.0
            if index % 10 == 9 and stop == 1:
                gap = rng.uniform(16, 90) * 60  # beyond trackintel's 15 min gap_threshold
            if index % 10 == 4 and stop == 2:
                name = "quectel-eg25-g"
            day.stay(name, rng.uniform(8, 150) * 60, gap)
            day.trip(["bundg_zeus_9"] + [rng.choice(moving) for _ in range(rng.randint(1, 4))])
        days.append(day)
    return days + stitched_hike_days(count, MONTH)


class Daemon:
    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.directory = tempfile.mkdtemp(prefix="akloc-trackintel-")
        os.chmod(self.directory, 0o755)
        self.socket = os.path.join(self.directory, "akloc.sock")
        config = os.path.join(self.directory, "akloc.conf")
        with open(config, "w") as file:
            file.write(f"[geo]\ndata-dir = {os.path.join(REPOSITORY, 'data')}\n"
                       "[track]\nretention-days = 36500\nmax-size = 1G\n")
        with socket.socket() as probe:  # a port nothing listens on: no receiver
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.log = open(os.path.join(self.directory, "aklocd.log"), "ab")
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "aklocd"), "--socket", self.socket, "--gpsd", f"127.0.0.1:{port}",
             "--state-dir", os.path.join(self.directory, "state"), "--config", config],
            stdout=self.log, stderr=self.log, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(self.socket)
                    return
                except OSError:
                    time.sleep(0.05)
            if self.process.poll() is not None:
                break
        self.stop()
        raise RuntimeError("aklocd did not start")

    def akloc(self, *arguments):
        done = subprocess.run([os.path.join(self.bin_dir, "akloc"), "--socket", self.socket, *arguments],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"akloc {' '.join(arguments)}: {done.stderr}")
        return done.stdout

    def visits(self, since, until):
        result = json.loads(self.akloc("timeline", "--json", "--since", iso(since), "--until", iso(until)))
        return result["visits"], result["trips"]

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def parse(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def staypoints(points):
    frame = pandas.DataFrame({
        "user_id": 0,
        "tracked_at": pandas.to_datetime([p[0] for p in points], unit="s", utc=True),
        "latitude": [p[1] for p in points], "longitude": [p[2] for p in points]})
    pfs = trackintel.Positionfixes(geopandas.GeoDataFrame(
        frame, geometry=geopandas.points_from_xy(frame.longitude, frame.latitude), crs="EPSG:4326"))
    _, sp = pfs.generate_staypoints(method="sliding", dist_threshold=100, time_threshold=5)
    return [(row.started_at.timestamp(), row.finished_at.timestamp()) for row in sp.itertuples()]


def match(reference, visits):
    """Pairs each staypoint with a visit within TOLERANCE at both ends (each visit once)."""
    used = set()
    agreed, missing = [], []
    for arrival, departure in reference:
        found = None
        for index, visit in enumerate(visits):
            if index in used or "departure" not in visit:
                continue
            if abs(parse(visit["arrival"]) - arrival) <= TOLERANCE and \
                    abs(parse(visit["departure"]) - departure) <= TOLERANCE:
                found = index
                break
        if found is None:
            missing.append((arrival, departure))
        else:
            used.add(found)
            agreed.append((arrival, departure, visits[found]))
    extra = [visit for index, visit in enumerate(visits) if index not in used]
    return agreed, missing, extra


def cause(day, moment):
    """What the day held at `moment`: the stay around it (with its gap or
    glitch), else the trip."""
    around = [stay for stay in day.stays if stay[1] - 600 <= moment <= stay[2] + 600]
    inside = [stay for stay in around if stay[1] <= moment <= stay[2]]
    # An arrival a little before a stay's first fix (the approach) is that stay's.
    for name, arrival, departure, gap in inside or sorted(around, key=lambda stay: abs(stay[1] - moment)):
        if gap:
            return f"a {gap / 60:.0f} min gap inside a stay ({name})"
        if name in JITTERY:
            return f"a still receiver's glitches ({name})"
        return f"stay of {name}"
    if day.hike:
        return f"the hike {day.hike} at {iso(moment)[11:19]}{fixes_around(day, moment)}"
    return "on a trip"


def fixes_around(day, moment):
    """The hike's fixes near `moment`: the seconds between them, for the report."""
    times = [point[0] for point in day.points]
    index = min(range(len(times)), key=lambda i: abs(times[i] - moment))
    window = times[max(0, index - 2):index + 3]
    return f" (fixes {'/'.join(str(round(b - a)) for a, b in zip(window, window[1:]))} s apart)"


def compare(daemon, days, names, lines):
    """akloc's visits and trackintel's staypoints over the days' fixes as
    one stream (the journal is one); the differences go to `lines`, named
    by `names[i]` of the day. Returns (staypoints, agreed, visits, extra)."""
    points = [point for day in days for point in day.points]
    visits, _ = daemon.visits(points[0][0] - 1, points[-1][0] + 1)
    reference = staypoints(points)
    agreed, missing, extra = match(reference, visits)

    def day_of(moment):
        return max((i for i, day in enumerate(days) if day.points[0][0] <= moment + 600), default=0)

    times = [point[0] for point in points]

    def longest_gap(start, end):
        inside = [t for t in times if start <= t <= end]
        return max((b - a for a, b in zip(inside, inside[1:])), default=0.0)

    def span(visit):
        return parse(visit["arrival"]), parse(visit["departure"]) if "departure" in visit else math.inf

    same_stop = unexplained = by_gap = 0
    for arrival, departure in missing:
        index = day_of(arrival)
        gap = longest_gap(arrival, departure)
        over = [visit for visit in visits if span(visit)[0] < departure and span(visit)[1] > arrival]
        if over:
            same_stop += 1
            start, end = span(over[0])
            inner = longest_gap(start, end if end < math.inf else times[-1])
            gap_inside = inner >= TRACKINTEL_GAP
            by_gap += gap_inside
            why = (f"the same stop is akloc's {over[0]['arrival'][11:19]}–"
                   f"{over[0]['departure'][11:19] if end < math.inf else 'under way'}: arrival {start - arrival:+.0f} s"
                   + (f", departure {end - departure:+.0f} s" if end < math.inf else "")
                   + (f"; a {inner / 60:.0f} min gap inside akloc's" if gap_inside else ""))
        elif gap >= 300:
            by_gap += 1
            why = (f"{gap / 60:.0f} of its {(departure - arrival) / 60:.0f} min without a fix, and a move "
                   "across the gap (akloc: a trip)")
        else:
            unexplained += 1
            why = "UNEXPLAINED: no akloc visit overlaps it and it has no gap"
        lines.append(f"{names[index]}: trackintel {iso(arrival)}–{iso(departure)} has no akloc visit "
                     f"within 60 s: {cause(days[index], arrival)}; {why}")
    for visit in extra:
        start, end = span(visit)
        index = day_of(start)
        over = [sp for sp in reference if sp[0] < end and sp[1] > start]
        gap = longest_gap(start, end if end < math.inf else times[-1])
        if gap >= TRACKINTEL_GAP:
            why = f"a {gap / 60:.0f} min gap inside it (trackintel begins again after 15 min)"
        elif over:
            why = f"trackintel's staypoint there is {iso(over[0][0])[11:19]}–{iso(over[0][1])[11:19]}"
        elif end == math.inf:
            why = "under way at the end of the fixes"
        else:
            why = "no staypoint overlaps it"
        lines.append(f"{names[index]}: akloc {visit['arrival']}–{visit.get('departure', '')} is no "
                     f"trackintel staypoint: {cause(days[index], start)}; {why}")
    return len(reference), len(agreed), len(visits), len(extra), same_stop, unexplained, by_gap


def main():
    bin_dir = sys.argv[1]
    report_path = sys.argv[2] if len(sys.argv) > 2 else None
    days = build_days(30, seed=2026)
    hikes = [hike_day(name) for name in HIKES]
    daemon = Daemon(bin_dir)
    lines = []
    try:
        work = tempfile.mkdtemp(prefix="akloc-days-")
        try:
            files = []
            for index, day in enumerate(days + hikes):
                path = os.path.join(work, f"day{index:02d}.gpx")
                gpx(day.points, path)
                files.append(path)
            daemon.akloc("track", "import", *files)
            # The same fixes for both: the stitched days as one stream, and
            # each hike on its own day (years before them), compared
            # staypoint by staypoint.
            names = [f"day {index:02d}" + (f" ({day.hike})" if day.hike else "") for index, day in enumerate(days)]
            captures = len(days) - len(HIKES)
            groups = [("the stitched days of captures", compare(daemon, days[:captures], names, lines)),
                      ("the hikes as trips between stays", compare(daemon, days[captures:], names[captures:], lines))]
            for day in hikes:
                groups.append((f"{day.hike} on its own day",
                               compare(daemon, [day], [f"{day.hike} {iso(day.points[0][0])[:10]}"], lines)))
            total, agreed_count, visit_count, extra_count, same_count, unexplained, gap_count = (
                sum(column) for column in zip(*(counts for _, counts in groups)))
            share = groups[0][1][1] / groups[0][1][0]
            overall = agreed_count / total
            held = agreed_count / (total - gap_count)
            summary = "\n".join(
                [f"trackintel {trackintel.__version__} sliding (100 m, 5 min): {total} staypoints in "
                 f"{len(days) + len(hikes)} days, {agreed_count} with an akloc visit within 60 s at both ends "
                 f"({100 * overall:.1f} %), {same_count} more the same stop with other bounds; akloc "
                 f"{visit_count} visits, {extra_count} with no staypoint",
                 f"  leaving out the {gap_count} a gap in the fixes explains: {agreed_count} of "
                 f"{total - gap_count} agree ({100 * held:.1f} %)"]
                + [f"  {name}: {counts[0]} staypoints, {counts[1]} agree ({100 * counts[1] / counts[0]:.1f} %), "
                   f"{counts[4]} the same stop; akloc {counts[2]} visits, {counts[3]} with no staypoint"
                   for name, counts in groups])
            # A still receiver looped for six hours: one visit, no trip.
            loops = []
            base = datetime.datetime(2026, 9, 1, 0, 0, tzinfo=datetime.timezone.utc).timestamp()
            for index, name in enumerate(CAPTURES["still"]):
                day = Day(base + index * 2 * 86_400, random.Random(index))
                day.stay(name, 6 * 3600)
                path = os.path.join(work, f"still-{name}.gpx")
                gpx(day.points, path)
                daemon.akloc("track", "import", path)
                visits, trips = daemon.visits(day.points[0][0] - 1, day.points[-1][0] + 1)
                reference = staypoints(day.points)
                loops.append((name, len(day.points), len(visits), len(trips), len(reference)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        daemon.stop()
    out = [summary, ""] + lines + ["", "six hours of a still receiver (capture, fixes, akloc visits, akloc trips, "
                                        "trackintel staypoints with include_last=False):"]
    out += [f"  {name}: {fixes} fixes, {visits} visit(s), {trips} trip(s), {sps} staypoint(s)"
            for name, fixes, visits, trips, sps in loops]
    text = "\n".join(out) + "\n"
    print(text, end="")
    if report_path:
        with open(report_path, "w") as file:
            file.write(text)
    failed = False
    if share < REQUIRED:
        print(f"FAIL: {100 * share:.1f} % of the captures' staypoints agree, below {100 * REQUIRED:.0f} %")
        failed = True
    if held < REQUIRED:
        print(f"FAIL: {100 * held:.1f} % of the staypoints no gap explains agree, below {100 * REQUIRED:.0f} %")
        failed = True
    if unexplained:
        print(f"FAIL: {unexplained} staypoint(s) with no akloc visit and no gap (UNEXPLAINED above)")
        failed = True
    for name, _, visits, trips, _ in loops:
        if visits != 1 or trips != 0:
            print(f"FAIL: six hours of {name} gave {visits} visits and {trips} trips, not one visit and none")
            failed = True
    sys.exit(1 if failed else 0)


main()
