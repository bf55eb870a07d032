#!/usr/bin/env python3
"""Writes aklocd's symbol-ordering file from a callgrind profile and lld's link map.

Usage: aklocd-order.py CALLGRIND-OUT LINK-MAP OUTPUT

Every function of aklocd's own binary that callgrind saw run (called or
calling) is listed, in the order the profile first names it, when each of its
definitions is a section of its own (`.text.NAME`, which `-function-sections`
gives every Swift function), or in a small shared `.text` (a C object's). A name
defined inside a big shared `.text` (the static runtime's Swift.o, 1.6 MiB)
is left out: ordering it would drag that whole section, mostly cold, into
the hot range.
The link map must be written with `--no-demangle`, so C++ names match the
profile's mangled ones. scripts/code-layout/make-order.sh drives this; why it
matters is in bench/NOTES.md, "Code layout".
"""
import re
import sys


def executed_functions(path):
    objects, functions, executed = {}, {}, {}
    current_object, called_object = None, None

    def note(obj, fid):
        if obj and "aklocd" in obj.rsplit("/", 1)[-1]:
            executed.setdefault(re.sub(r"'\d+$", "", functions[fid]), len(executed))

    with open(path, errors="replace") as profile:
        for line in profile:
            line = line.rstrip("\n")
            m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3):
                    objects[m.group(2)] = m.group(3)
                if m.group(1) == "ob":
                    current_object = objects.get(m.group(2))
                else:
                    called_object = objects.get(m.group(2))
                continue
            m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3):
                    functions[m.group(2)] = m.group(3)
                if m.group(1) == "fn":
                    note(current_object, m.group(2))
                else:
                    note(called_object or current_object, m.group(2))
                    called_object = None
    return executed


# A shared section this small (a C object of libgps or libdispatch, built
# without function sections) is ordered whole: what it drags along is less
# than the 64 KiB of cold code around it that its one hot function would map.
SMALL_SHARED_SECTION = 48 * 1024


def text_definitions(path):
    """symbol -> the input sections of .text that define it, with their sizes."""
    definitions, section, in_text = {}, None, False
    with open(path) as link_map:
        for line in link_map:
            fields = line.split(None, 4)
            if len(fields) < 5:
                continue
            rest = fields[4].strip()
            if fields[4].startswith("."):
                in_text = rest == ".text"
                continue
            if not in_text:
                continue
            if ":(" in rest:
                section = (rest, int(fields[2], 16))
            elif section:
                definitions.setdefault(rest, []).append(section)
    return definitions


def main():
    profile, link_map, output = sys.argv[1:4]
    executed = executed_functions(profile)
    definitions = text_definitions(link_map)
    kept, shared = [], 0
    for name in sorted(executed, key=executed.get):
        sections = definitions.get(name)
        if not sections:
            continue
        if all(s.endswith(":(.text." + name + ")") or size <= SMALL_SHARED_SECTION for s, size in sections):
            kept.append(name)
        else:
            shared += 1
    with open(output, "w") as out:
        out.write("\n".join(kept) + "\n")
    print(f"{len(executed)} functions ran; {len(kept)} ordered, {shared} left in shared sections", file=sys.stderr)


if __name__ == "__main__":
    main()
