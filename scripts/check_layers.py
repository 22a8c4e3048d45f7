#!/usr/bin/env python3
"""The engine's rooms and their one-way dependencies, checked.

Every engine file lives in a room (engine/include/tunelock/<room>/ for the
public headers, engine/src/<room>/ for the rest) and names the room of every
engine header it includes ("tunelock/tables/table.hpp", "io/sealed_file.hpp").
A room may include its own and the rooms listed before it, never one after:

    base < io < model < tables < logs < decision < records < foreign < verify < runtime

Public headers never include private ones (an installed header would not
compile), and the engine includes no face (launcher, C ABI, CUDA, UCX).
Exits 1 naming each file:line that breaks a rule; 0 when none does.

Usage: check_layers.py [ENGINE_DIR]  (default: the engine beside this script)
"""
import os
import re
import sys

ROOMS = ["base", "io", "model", "tables", "logs", "decision", "records", "foreign", "verify", "runtime"]
ORDER = {room: i for i, room in enumerate(ROOMS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')
FACES = ("tunelock/launcher/", "tunelock/c_api.h", "tunelock/watch.h", "cuda", "cupti", "ucp/", "ucs/",
         "emscripten")


def engine_files(engine):
    for top, public in (("include/tunelock", True), ("src", False)):
        base = os.path.join(engine, top)
        for folder, _, names in os.walk(base):
            for name in sorted(names):
                if name.endswith((".hpp", ".cpp", ".h")):
                    path = os.path.join(folder, name)
                    yield path, os.path.relpath(path, base), public


def includes(path):
    """(line number, bracket, target) of every #include of a source file."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1), match.group(2)


def problems(engine):
    found = []
    for path, relative, public in engine_files(engine):
        parts = relative.split(os.sep)
        room = parts[0] if len(parts) > 1 else None
        if room not in ORDER:
            found.append(f"{path}: not in a room (put it under one of {', '.join(ROOMS)})")
            continue
        for number, bracket, target in includes(path):
            where = f"{path}:{number}"
            if any(target.startswith(face) for face in FACES):
                found.append(f"{where}: the engine includes a face or a device library ({target})")
                continue
            if bracket == "<" or target.startswith("tunelock/fb/"):
                continue  # system, third-party and generated schema headers
            if target.startswith("tunelock/"):
                included, private = target.split("/")[1], False
            else:
                included, private = target.split("/")[0], True
                if "/" not in target:
                    found.append(f"{where}: \"{target}\" names no room (write \"<room>/{target}\")")
                    continue
            if included not in ORDER:
                found.append(f"{where}: \"{target}\" is in no room")
            elif ORDER[included] > ORDER[room]:
                found.append(f"{where}: {room}/ includes {included}/ ({target}), a room above it; "
                             f"the order is {' < '.join(ROOMS)}")
            elif private and public:
                found.append(f"{where}: a public header includes the private \"{target}\" "
                             "(installed headers must compile alone)")
    return found


def main(argv):
    engine = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "..", "engine")
    if not os.path.isdir(os.path.join(engine, "include", "tunelock")):
        print(f"check_layers: {engine} has no include/tunelock: not an engine folder", file=sys.stderr)
        return 2
    found = problems(engine)
    for line in found:
        print(line, file=sys.stderr)
    count = sum(1 for _ in engine_files(engine))
    print(f"{count} engine files in {len(ROOMS)} rooms: "
          f"{'no include crosses a layer the wrong way' if not found else f'{len(found)} problem(s)'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
