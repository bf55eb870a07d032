#!/usr/bin/python3
"""Extracts the fixes of real receiver captures (gpsd's regression logs, the
shared set described in /work/shared/gpsd-logs/README.md, BSD-2-Clause) into
Tests/Fixtures/timeline/captures.json: per capture, each TPV with a fix
(mode >= 2) as [seconds from the capture's first fix, latitude, longitude,
horizontal accuracy in metres or null], one per distinct time, in time order.
The timeline check (Tests/Timeline/check_trackintel.py) stitches days from
them. Run: scripts/timeline-captures.py DIR_WITH_CHK_FILES"""

import datetime
import json
import math
import os
import sys

# Still receivers (stays) and moving ones (trips), by what README.md says of them.
STILL = ["sirf2", "ublox-glo", "telit-he910", "quectel-l76k-dual", "ais-nmea", "ublox-neo-m9n-nmea",
         "ericsson-gru04-02-70sec", "trimble-smt-360", "mt3339", "garmin18x-bin", "unicore-um621",
         "navisys-gr701w", "meinberg-gps164", "quectel-eg25-g"]
MOVING = ["bundg_zeus_9", "nl2008u", "humminbird-M37", "haicom-305N"]


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def fixes(path):
    seen = {}
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            if not line.startswith('{"class":"TPV"'):
                continue
            tpv = json.loads(line)
            if tpv.get("mode", 0) < 2 or "lat" not in tpv or "time" not in tpv:
                continue
            accuracy = None
            if "epx" in tpv and "epy" in tpv:
                accuracy = round(math.hypot(tpv["epx"], tpv["epy"]), 1)
            # gpsd refines an epoch over several TPVs: the last one of a time wins.
            seen[parse_time(tpv["time"])] = [tpv["lat"], tpv["lon"], accuracy]
    times = sorted(seen)
    return [[round(t - times[0], 3)] + seen[t] for t in times]


def main():
    directory = sys.argv[1]
    out = {"still": {}, "moving": {}}
    for kind, names in (("still", STILL), ("moving", MOVING)):
        for name in names:
            out[kind][name] = fixes(os.path.join(directory, name + ".log.chk"))
    target = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "timeline", "captures.json")
    with open(target, "w") as file:
        json.dump(out, file, separators=(",", ":"))
        file.write("\n")
    for kind in out:
        for name, points in out[kind].items():
            print(kind, name, len(points), points[-1][0] if points else 0)


main()
