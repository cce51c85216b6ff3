#!/usr/bin/env python3
"""Lint every .metal file under a folder and report how many are clean.

Usage: tools/lint_corpus.py FOLDER [-I DIR]... [--bin PATH] [--skip-nax] [--show N]

Prints a table (files, clean, percent, slowest file), then the first error of
each failing file, grouped by cause (the message with names replaced by `…`)
and ranked by how many files each cause stops. Files that include Apple's
Metal 4 tensor headers are counted separately when --skip-nax is given:
they must fail with an unsupported header (code E0107), nothing else.
"""
import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys
import time

# The code of "unsupported header" (msl::diag::codes::UNSUPPORTED_HEADER).
UNSUPPORTED_HEADER = "E0107"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--bin", default="target/release/metal-puzzles")
    ap.add_argument("--skip-nax", action="store_true", help="exclude files refused for Metal 4 tensor headers")
    ap.add_argument("--show", type=int, default=0, help="also list N failing files per cause")
    args = ap.parse_args()

    files = sorted(pathlib.Path(args.folder).rglob("*.metal"))
    clean, failures, excluded, slowest = 0, [], [], (0.0, "")
    for f in files:
        cmd = [args.bin, "lint", "--json", str(f)] + [x for d in args.includes for x in ("-I", d)]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        slowest = max(slowest, (dt, f.name))
        try:
            diags = json.loads(p.stdout)["diagnostics"]
        except (ValueError, KeyError):
            failures.append((f, f"crash or bad output (exit {p.returncode}): {p.stderr.strip()[:200]}"))
            continue
        errors = [d for d in diags if d["severity"] == "error"]
        if p.returncode == 0 and not errors:
            clean += 1
            continue
        first = errors[0] if errors else {"message": f"exit {p.returncode}", "file": "", "line": 0}
        if args.skip_nax and first.get("code") == UNSUPPORTED_HEADER:
            excluded.append(f)
            continue
        failures.append((f, f"{first['message']}  [{pathlib.Path(first.get('file', '')).name}:{first.get('line')}]"))

    counted = len(files) - len(excluded)
    pct = 100.0 * clean / counted if counted else 0.0
    print(f"| folder | files | clean | % | excluded (Metal 4 tensor headers) | slowest file |")
    print(f"|---|---|---|---|---|---|")
    print(f"| {args.folder} | {counted} | {clean} | {pct:.1f} | {len(excluded)} | {slowest[0]*1000:.0f} ms ({slowest[1]}) |")
    causes = collections.defaultdict(list)
    for f, msg in failures:
        causes[re.sub(r"`[^`]*`", "`…`", msg.split("  [")[0])].append((f, msg))
    if causes:
        print("\nfirst error of each failing file, by cause:")
    for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(items):4}  {cause}")
        for f, msg in items[: args.show]:
            print(f"        {f.name}: {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
