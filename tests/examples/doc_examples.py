#!/usr/bin/env python3
"""Runs every example the documents show, as they show it.

    tests/examples/doc_examples.py --build BUILD_DIR --source SOURCE_DIR [--list] [NAME_REGEX]

An example is a line of a fenced code block in README.md or docs/*.md that starts with
"$ build/bin/aiac-spawner", or "$ examples/" (a script of examples/, such as one that starts a
federation by hand). It is run from a scratch folder that holds copies of examples/,
conf/ and apps/ (so that outputs, caches and keys land there, never in the source tree) with
build/ pointing at BUILD_DIR. What it must exit with follows from the lines the block shows after
it: a line "aiac-spawner: ..." or "aiac-spawner map: ..." is a refused input (exit 2), a summary
line "job NAME (APP, MODE): failed ..." or "... diverged ..." a run that ends short (exit 1);
otherwise it must succeed (exit 0). Every file of examples/ but data/ and an app's sources must
be used by at least one example, so that no example rots unseen. Exits 0 when every example behaved as shown.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = ("$ build/bin/aiac-spawner", "$ examples/")


def examples_in(path):
    """(line number, command, expected exit) for each example of one Markdown file."""
    found, in_code = [], False
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code or not line.startswith(PROMPTS):
            continue
        command = re.sub(r"\s{2,}#.*$", "", line[2:]).strip()
        expected = 0
        for after in lines[i + 1:]:
            if after.startswith("```") or after.startswith("$ "):
                break
            if re.match(r"^aiac-spawner( \w+)?: ", after):
                expected = 2
            elif re.match(r"^job \S+ \([^)]*\): (failed|diverged)", after):
                expected = 1
        found.append((i + 1, command, expected))
    return found


def scratch_folder(source, build):
    root = Path(tempfile.mkdtemp(prefix="aiac-doc-examples-"))
    for folder in ("examples", "conf", "apps"):
        shutil.copytree(source / folder, root / folder, symlinks=True,
                        ignore=shutil.ignore_patterns("*.cc", "*.h", "CMakeLists.txt", "*.aiac-csr"))
    (root / "build").symlink_to(build.resolve())
    return root


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--list", action="store_true", help="list the examples, run nothing")
    parser.add_argument("only", nargs="?", default="", help="run only commands matching this")
    args = parser.parse_args()
    docs = [args.source / "README.md"] + sorted((args.source / "docs").glob("*.md"))
    examples = [(doc.relative_to(args.source), n, cmd, code)
                for doc in docs for n, cmd, code in examples_in(doc)
                if re.search(args.only, cmd)]
    if args.list:
        for doc, n, cmd, code in examples:
            print(f"{doc}:{n}: exit {code}: {cmd}")
        return 0
    failures = []
    if not args.only:
        used = " ".join(cmd for _, _, cmd, _ in examples)
        for f in sorted((args.source / "examples").rglob("*")):
            rel = f.relative_to(args.source)
            source = f.suffix in (".cc", ".h") or f.name == "CMakeLists.txt"
            if f.is_file() and rel.parts[1] != "data" and not source and str(rel) not in used:
                failures.append(f"{rel}: no example of the documents uses it")
    root = scratch_folder(args.source, args.build)
    try:
        for doc, n, cmd, expected in examples:
            start = time.monotonic()
            try:
                run = subprocess.run(shlex.split(cmd), cwd=root, capture_output=True, text=True,
                                     timeout=600, stdin=subprocess.DEVNULL)
                code, output = run.returncode, run.stdout + run.stderr
            except subprocess.TimeoutExpired as e:
                code, output = "timeout", (e.stdout or b"").decode() + (e.stderr or b"").decode()
            took = time.monotonic() - start
            status = "ok" if code == expected else "FAILED"
            print(f"{status:6} {doc}:{n} ({took:.1f} s, exit {code}, expected {expected}): {cmd}",
                  flush=True)
            if code != expected:
                tail = "\n".join(output.strip().split("\n")[-15:])
                failures.append(f"{doc}:{n}: {cmd}\n  exit {code}, expected {expected}; last lines:\n{tail}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(examples) - len([f for f in failures if ': exit ' in f or 'exit ' in f])} passed, "
          f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
