#!/usr/bin/env python3
"""Rewrites the "## Contents" list of each Markdown file given (docs/*.md by default) from its
## and ### headings, so that a table of contents never drifts from the text.

    tools/docs_toc.py [--check] [FILE.md ...]

--check changes nothing and exits 1 when a file's list is not the one its headings give.
"""
import re
import sys
from pathlib import Path


def anchor(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def contents(lines):
    out, in_code = [], False
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(##|###) (.+)$", line)
        if m and m.group(2) != "Contents":
            indent = "  " * (len(m.group(1)) - 2)
            out.append(f"{indent}- [{m.group(2)}](#{anchor(m.group(2))})")
    return out


def rewrite(text):
    lines = text.split("\n")
    if "## Contents" not in lines:
        return text
    start = lines.index("## Contents")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].lstrip().startswith("- [")):
        end += 1
    return "\n".join(lines[: start + 1] + [""] + contents(lines[end:]) + [""] + lines[end:])


def main(argv):
    check = "--check" in argv
    files = [Path(a) for a in argv if a != "--check"]
    if not files:
        files = sorted(Path(__file__).resolve().parent.parent.joinpath("docs").glob("*.md"))
    stale = []
    for path in files:
        text = path.read_text()
        new = rewrite(text)
        if new != text:
            stale.append(str(path))
            if not check:
                path.write_text(new)
    if check and stale:
        print("contents out of date (run tools/docs_toc.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
