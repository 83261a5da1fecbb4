#!/usr/bin/env python3
"""Prove that two revisions produce byte-identical simulation output.

A refactor or a speed-up must leave every simulation output unchanged (DEVELOPERS' guide). This
script builds the engine of two revisions (the `run_json` example of tcpf-core: the engine's JSON
without the Python layer, exactly what `tcpf run --json` prints), runs the same scenarios with
both and compares the bytes:

- every scenario of the ns-2 bank (`validation/ns2/*.toml`),
- every scenario in `examples/` (sweep specs are skipped: their runs are these scenarios),
- the mixes in `scripts/identity/` (TFRC, TFRCP, TEAR, TCP with every recovery mode, CBR,
  Pareto, a formula controller, a graph, the history spectrum with SIMD/period, the loss log
  and time series on, and 160 flows: the event loop's many-link instance),
- and the controller registry (`tcpf algorithms --json`).

`--ignore-events` masks the result's `events` (how many events the engine handled: a count of
its work, not a simulation result) and compares every other byte: for a change to the engine's
event structure that must leave the results alone (issue 15's three events per packet).

    python3 scripts/compare_outputs.py HEAD~3            # HEAD~3 against the working tree
    python3 scripts/compare_outputs.py main my-branch    # two revisions
    python3 scripts/compare_outputs.py HEAD --only 'red-*' --skip-long
    python3 scripts/compare_outputs.py HEAD . --pgo      # plain HEAD against the profile-guided tree

Revisions are checked out with `git worktree` under target/compare/ and built once each
(cached by commit id; `.` or `WORKTREE` is the working tree as it is, uncommitted changes
included). Exit 0 when everything is identical, 1 when anything differs (each difference named,
with the first JSON path that differs), 2 on a usage or build error.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER_SRC = os.path.join(ROOT, "crates", "tcpf-core", "examples", "run_json.rs")
WORK = os.path.join(ROOT, "target", "compare")
LONG_SECONDS = 600  # --skip-long: scenarios simulating longer than this (the 1200-s *-100m runs)


def die(msg: str) -> None:
    print(f"compare_outputs: error: {msg}", file=sys.stderr)
    sys.exit(2)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def checkout(rev: str) -> tuple[str, str]:
    """(source directory, label) of a revision; the working tree for '.' / 'WORKTREE'."""
    if rev in (".", "WORKTREE"):
        return ROOT, "worktree"
    try:
        sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        die(f"unknown revision {rev!r}")
    src = os.path.join(WORK, sha[:12], "src")
    if not os.path.isdir(src):
        os.makedirs(os.path.dirname(src), exist_ok=True)
        git("worktree", "add", "--detach", "--force", src, sha)
    return src, sha[:12]


def build(src: str, label: str, pgo: bool = False) -> str:
    """Build the run_json example of the revision in `src` (profile-guided with `pgo`: the
    working tree only, with scripts/pgo.py's profile); return the binary's path."""
    import pgo as pgo_build  # scripts/pgo.py: the build's cargo command, the profile and its flags
    example = os.path.join(src, "crates", "tcpf-core", "examples", "run_json.rs")
    if not os.path.exists(example):  # revisions older than this script: add the runner
        os.makedirs(os.path.dirname(example), exist_ok=True)
        shutil.copyfile(RUNNER_SRC, example)
    if pgo:
        env = pgo_build.build_env(pgo_build.make(force=False))
        target = env["CARGO_TARGET_DIR"]
        label += " (profile-guided)"
    else:
        target = os.path.join(WORK, label, "target")
        env = dict(os.environ, CARGO_TARGET_DIR=target)
    print(f"building {label} ...", file=sys.stderr, flush=True)
    r = subprocess.run(pgo_build.BUILDS["run_json"], cwd=src, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
        die(f"the build of {label} failed")
    return os.path.join(target, "release", "examples", "run_json")


def scenarios(only: list[str], skip_long: bool) -> list[tuple[str, str]]:
    """(name, scenario JSON) of every scenario to compare, in a fixed order."""
    files = []
    for folder in ("validation/ns2", "examples", "scripts/identity"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".toml") and name != "bank.toml":
                files.append(f"{folder}/{name}")
    out = []
    for rel in files:
        with open(os.path.join(ROOT, rel), "rb") as f:
            data = tomllib.load(f)
        if "flows" not in data:  # a sweep spec, not a scenario
            continue
        if only and not any(fnmatch.fnmatch(os.path.basename(rel), p) or fnmatch.fnmatch(rel, p)
                            for p in only):
            continue
        if skip_long and float(data.get("duration", 0)) > LONG_SECONDS:
            continue
        out.append((rel, json.dumps(data)))
    return out


def first_difference(a, b, path: str = "") -> str:
    """The first JSON path at which a and b differ."""
    if type(a) is not type(b):
        return f"{path or '<root>'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'first' if k in a else 'second'}"
            d = first_difference(a[k], b[k], f"{path}.{k}" if path else k)
            if d:
                return d
        if list(a) != list(b):
            return f"{path or '<root>'}: key order differs"
        return ""
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return f"{path}: length {len(a)} vs {len(b)}" if len(a) != len(b) else ""
    return "" if a == b else f"{path}: {a!r} vs {b!r}"


EVENTS = re.compile(rb'"events":[0-9]+')


def run(binary: str, args: list[str], stdin: str, ignore_events: bool = False) -> tuple[int, bytes]:
    r = subprocess.run([binary, *args], input=stdin.encode(), capture_output=True)
    if r.returncode != 0:
        return r.returncode, r.stderr
    out = r.stdout
    if ignore_events and not args:  # a run's result (the registry has no event count)
        out, n = EVENTS.subn(b'"events":"(masked)"', out)
        if n != 1:
            die(f"{binary}: expected one \"events\" field in a run's result, found {n}")
    return 0, out


def compare(name: str, a: tuple[int, bytes], b: tuple[int, bytes]) -> str:
    """'' when identical, else a one-line description."""
    if a == b:
        return ""
    if a[0] != b[0]:
        return f"exit {a[0]} vs {b[0]}: {(a[1] if a[0] else b[1]).decode(errors='replace')[:300]}"
    try:
        return first_difference(json.loads(a[1]), json.loads(b[1])) or "bytes differ (same JSON)"
    except ValueError:
        return "bytes differ"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("rev_a", help="first revision (e.g. HEAD~1, main, a commit id)")
    ap.add_argument("rev_b", nargs="?", default=".", help="second revision (default: the working tree)")
    ap.add_argument("--only", action="append", default=[], metavar="GLOB",
                    help="only scenarios whose file name or path matches (repeatable)")
    ap.add_argument("--skip-long", action="store_true",
                    help=f"skip scenarios longer than {LONG_SECONDS} simulated seconds")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs")
    ap.add_argument("--no-algorithms", action="store_true", help="do not compare the registry")
    ap.add_argument("--seeds", type=int, default=0, metavar="N",
                    help="run every scenario with seeds 1..N too (default: its own seed only); "
                         "the ns-2 bank compares 3-10 seeds per scenario")
    ap.add_argument("--pgo", action="store_true",
                    help="build the second revision (the working tree) profile-guided, as "
                         "scripts/setup.sh builds the extension (scripts/pgo.py): proves that "
                         "the profile-guided build gives the plain build's bytes")
    ap.add_argument("--ignore-events", action="store_true",
                    help="mask the engine's event count (\"events\") before comparing; every other byte must match")
    args = ap.parse_args()

    todo = scenarios(args.only, args.skip_long)
    if not todo:
        die("no scenario matches")
    if args.pgo and args.rev_b not in (".", "WORKTREE"):
        die("--pgo builds the working tree profile-guided: give '.' as the second revision")
    binaries = [build(*checkout(args.rev_a)), build(*checkout(args.rev_b), pgo=args.pgo)]
    t0 = time.monotonic()
    jobs = [(name, [], text) for name, text in todo]
    for seed in range(1, args.seeds + 1):
        jobs += [(f"{name} (seed {seed})", [], json.dumps({**json.loads(text), "seed": seed}))
                 for name, text in todo]
    if not args.no_algorithms:
        jobs.insert(0, ("tcpf algorithms --json", ["algorithms"], ""))
    differ = 0
    with cf.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [(name, pool.submit(run, binaries[0], argv, text, args.ignore_events),
                    pool.submit(run, binaries[1], argv, text, args.ignore_events)) for name, argv, text in jobs]
        for name, fa, fb in futures:
            a, b = fa.result(), fb.result()
            why = compare(name, a, b)
            digest = hashlib.sha256(a[1]).hexdigest()[:12]
            if why:
                differ += 1
                print(f"DIFFERS    {name}: {why}")
            else:
                print(f"identical  {name}  sha256 {digest}{'' if a[0] == 0 else '  (both fail the same way)'}")
    print(f"{len(jobs) - differ} of {len(jobs)} identical ({args.rev_a} vs {args.rev_b}"
          f"{', event counts masked' if args.ignore_events else ''}), {time.monotonic() - t0:.0f} s of runs")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
