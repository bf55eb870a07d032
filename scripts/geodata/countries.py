"""data/calling-codes.tsv: the international calling code of each country.

Generated from Debian python3-phonenumbers (the venv sees the system site
packages). Country names, alpha-3, numeric codes and translations are read
at run time from Debian iso-codes; this file adds what iso-codes lacks: the
calling code, and a name for the codes Natural Earth uses that ISO 3166-1
does not have (XK, Kosovo).

Columns: alpha-2, calling code ("+31"; empty when phonenumbers has none),
name (only for codes missing from iso-codes).
"""

import json

import phonenumbers

ORDER = 30
ISO_JSON = "/usr/share/iso-codes/json/iso_3166-1.json"
# User-assigned codes that Natural Earth's ISO_A2_EH uses.
EXTRA_NAMES = {"XK": "Kosovo"}


def build(data_dir):
    iso = sorted(entry["alpha_2"] for entry in json.load(open(ISO_JSON, encoding="utf-8"))["3166-1"])
    lines = [
        "# alpha-2\tcalling code\tname (only where iso-codes has none)",
        f"# from Debian python3-phonenumbers {phonenumbers.__version__}; see docs/geodata.md",
    ]
    for code in sorted(set(iso) | set(EXTRA_NAMES)):
        calling = phonenumbers.country_code_for_region(code)
        phone = f"+{calling}" if calling else ""
        lines.append(f"{code}\t{phone}\t{EXTRA_NAMES.get(code, '')}".rstrip("\t"))
    (data_dir / "calling-codes.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"  calling-codes.tsv: {len(lines) - 2} countries")
