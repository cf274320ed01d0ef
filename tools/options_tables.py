#!/usr/bin/env python3
"""Writes the options tables of docs/ from the programs' declarations, so that a table never
drifts from what the programs read. A table stands between two markers:

    <!-- options daemon -->
    | key | flag | type | default | meaning |
    ...
    <!-- end options -->

and its rows are what `aiac-options-doc daemon` prints (tools/options_doc.cc).

    tools/options_tables.py [--check] [--bin build/bin/aiac-options-doc] [FILE.md ...]

--check changes nothing and exits 1, naming the table, when a table differs from the
declarations (a ctest runs it); without it the tables are rewritten. FILE.md defaults to
docs/*.md.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- options (\w+) -->$")
END = "<!-- end options -->"


def rewrite(path, tool):
    lines = path.read_text().split("\n")
    out, i, sections = [], 0, []
    while i < len(lines):
        out.append(lines[i])
        m = MARKER.match(lines[i])
        i += 1
        if not m:
            continue
        end = i
        while end < len(lines) and lines[end] != END:
            end += 1
        if end == len(lines):
            sys.exit(f"{path}: '{lines[i - 1]}' has no '{END}'")
        table = subprocess.run([tool, m.group(1)], check=True, capture_output=True, text=True)
        out.extend(table.stdout.rstrip("\n").split("\n"))
        sections.append(m.group(1))
        i = end
    return "\n".join(out), sections


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--bin", default=str(ROOT / "build/bin/aiac-options-doc"))
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = [Path(f) for f in args.files] or sorted((ROOT / "docs").glob("*.md"))
    stale, seen = [], []
    for path in files:
        text = path.read_text()
        new, sections = rewrite(path, args.bin)
        seen.extend(sections)
        if new == text:
            continue
        if args.check:
            stale.append(f"{path}: options tables {', '.join(sections)}")
        else:
            path.write_text(new)
            print(f"rewrote {path}")
    if args.check and stale:
        print("options tables differ from the declarations (run tools/options_tables.py):",
              *stale, sep="\n  ")
        return 1
    missing = {"common", "listening", "supernode", "daemon", "spawner", "job", "cg"} - set(seen)
    if missing and not args.files:
        print("no table for the options of: " + ", ".join(sorted(missing)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
