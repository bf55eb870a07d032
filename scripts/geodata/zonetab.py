"""Debian tzdata's zone.tab: the country code of each IANA zone (helper, not a step)."""

ZONE_TAB = "/usr/share/zoneinfo/zone.tab"


def country_of_zone():
    codes = {}
    with open(ZONE_TAB, encoding="utf-8") as tab:
        for line in tab:
            if line.startswith("#") or not line.strip():
                continue
            code, _, zone = line.split("\t")[:3]
            codes[zone.strip()] = code
    return codes
