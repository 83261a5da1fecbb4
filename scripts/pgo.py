#!/usr/bin/env python3
"""Profile-guided optimisation (PGO) of the simulator: the profile that release builds use.

    python3 scripts/pgo.py            # make (or reuse) the profile; print its path
    python3 scripts/pgo.py --force    # make it again
    python3 scripts/pgo.py --env      # print the build's variables (RUSTFLAGS=..., CARGO_TARGET_DIR=...)

A profile-guided build lays out and inlines the engine's code by how often each branch runs
on real scenarios. It changes no result (the compiler keeps the program's meaning; Rust does
no fast-math), only its speed: on the 50-s reference workload of benchmarks/vs_ns2.py it runs
10 % fewer instructions. How the profile is made:

1. the two products that run simulations are built instrumented (rustc
   `-Cprofile-generate`), each with the cargo command its real build uses, so that their
   functions carry the same names in the profile: the `run_json` example of tcpf-core (what
   benchmarks/vs_ns2.py times) and the Python extension `tcpfriendly._core` (tcpf-py);
2. both run the training set: every scenario of the ns-2 bank (validation/ns2), of examples/
   and of the identity mixes (scripts/identity) — the set scripts/compare_outputs.py checks,
   read through its `scenarios()` — cut to TRAIN_SECONDS simulated seconds each (what runs
   hot is the same in the rest of a run), about 10 s in all;
3. `llvm-profdata` (rustup's `llvm-tools`, the LLVM of this rustc; installed here when
   missing) merges the counts into target/pgo/<key>/tcpf.profdata.

The key hashes the Rust sources, Cargo.lock, the training set and the compiler, so an edited
engine gets a new profile and an unchanged one reuses it. scripts/setup.sh builds the
extension with `RUSTFLAGS=-Cprofile-use=<this path>` in target/pgo/use (`build_env()`, printed
by `--env`), and benchmarks/vs_ns2.py its run_json the same way. Exit 3 (with the reason on stderr) when PGO
is not possible here (no llvm-profdata for this rustc): the callers then build without it.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_outputs import scenarios  # noqa: E402  (one home for the bank + examples + mixes)

PGO = os.path.join(ROOT, "target", "pgo")
USE_TARGET = os.path.join(PGO, "use")   # where profile-guided builds go (own flags, own dir)
TRAIN_SECONDS = 60.0
# The cargo commands of the two products (run_json's is also the one vs_ns2.py, cache_curve.py,
# sack_scale.py and compare_outputs.py build with); setup.sh's maturin build of the extension
# selects the same package and features.
BUILDS = {
    "run_json": ["cargo", "build", "--release", "-q", "-p", "tcpf-core", "--example", "run_json"],
    "extension": ["cargo", "build", "--release", "-q", "-p", "tcpf-py"],
}


def say(msg: str) -> None:
    print(f"pgo: {msg}", file=sys.stderr, flush=True)


def unavailable(msg: str) -> None:
    print(f"pgo: unavailable: {msg}", file=sys.stderr)
    sys.exit(3)


def rustc_info() -> Tuple[str, str]:
    """(`rustc -vV` output, host triple)."""
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    host = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("host:"))
    return out, host


def llvm_profdata(host: str) -> Optional[str]:
    """rustup's llvm-profdata for this rustc (its LLVM reads this rustc's raw profiles)."""
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                             check=True).stdout.strip()
    path = os.path.join(sysroot, "lib", "rustlib", host, "bin", "llvm-profdata")
    if not os.path.exists(path) and shutil.which("rustup"):
        say("installing rustup's llvm-tools (llvm-profdata)")
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True)
    return path if os.path.exists(path) else None


def training_set() -> List[Tuple[str, str]]:
    """(name, scenario JSON) of each training run: compare_outputs' set, cut to TRAIN_SECONDS."""
    out = []
    for name, text in scenarios([], skip_long=False):
        data = json.loads(text)
        if float(data.get("duration", 0)) > TRAIN_SECONDS:
            data["duration"] = TRAIN_SECONDS
            data.pop("measure", None)  # its window may lie beyond the cut
        data.pop("trace", None)  # no trace files from training runs
        out.append((name, json.dumps(data, sort_keys=True)))
    return out


def key(rustc: str, train: List[Tuple[str, str]]) -> str:
    h = hashlib.sha256(rustc.encode())
    files = sorted(glob.glob(os.path.join(ROOT, "crates", "**", "*.rs"), recursive=True)
                   + glob.glob(os.path.join(ROOT, "crates", "*", "Cargo.toml"))
                   + [os.path.join(ROOT, "Cargo.lock"), os.path.join(ROOT, "Cargo.toml")])
    for f in files:
        h.update(os.path.relpath(f, ROOT).encode())
        with open(f, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    for name, text in train:
        h.update(name.encode())
        h.update(text.encode())
    return h.hexdigest()[:16]


def build_env(profile: Optional[str]) -> Dict[str, str]:
    """The environment of a profile-guided release build (own target directory, so that the
    plain builds in target/ are not rebuilt each time the flags change); the plain
    environment when `profile` is None."""
    env = dict(os.environ)
    if profile:
        flags = env.get("RUSTFLAGS", "").strip()
        env["RUSTFLAGS"] = (flags + " " if flags else "") + f"-Cprofile-use={profile}"
        env["CARGO_TARGET_DIR"] = USE_TARGET
    return env


def train_extension(so: str, train: List[Tuple[str, str]]) -> None:
    """Run the training set through the instrumented extension, in a child interpreter (its
    counts are written when that process exits)."""
    code = (
        "import importlib.machinery, importlib.util, json, sys\n"
        "loader = importlib.machinery.ExtensionFileLoader('_core', sys.argv[1])\n"
        "spec = importlib.util.spec_from_file_location('_core', sys.argv[1], loader=loader)\n"
        "core = importlib.util.module_from_spec(spec); loader.exec_module(core)\n"
        "for name, text in json.load(sys.stdin):\n"
        "    core.run(text, None, None, None)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, so], input=json.dumps(train), text=True,
                       capture_output=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        unavailable("the instrumented extension failed on the training set")


def make(force: bool) -> str:
    rustc, host = rustc_info()
    train = training_set()
    k = key(rustc, train)
    out = os.path.join(PGO, k, "tcpf.profdata")
    if os.path.exists(out) and not force:
        return out
    profdata = llvm_profdata(host)
    if profdata is None:
        unavailable("no llvm-profdata for this rustc (rustup component add llvm-tools)")
    raw = os.path.join(PGO, k, "raw")
    shutil.rmtree(raw, ignore_errors=True)
    os.makedirs(raw)
    gen = os.path.join(PGO, "gen")
    env = dict(os.environ, RUSTFLAGS=f"-Cprofile-generate={raw}", CARGO_TARGET_DIR=gen)
    for what, cmd in BUILDS.items():
        say(f"building the instrumented {what} ({' '.join(cmd[1:])})")
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr[-3000:])
            unavailable(f"the instrumented build of {what} failed")
    say(f"training on {len(train)} scenarios (the ns-2 bank, examples/, scripts/identity; "
        f"at most {TRAIN_SECONDS:g} s simulated each)")
    run_json = os.path.join(gen, "release", "examples", "run_json")
    for name, text in train:
        r = subprocess.run([run_json], input=text, text=True, capture_output=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr[-2000:])
            unavailable(f"the instrumented run_json failed on {name}")
    so = os.path.join(gen, "release", "lib_core.so")
    if not os.path.exists(so):
        unavailable(f"{so} was not built")
    train_extension(so, train)
    r = subprocess.run([profdata, "merge", "-o", out + ".tmp", raw], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        unavailable("llvm-profdata merge failed")
    os.replace(out + ".tmp", out)
    shutil.rmtree(raw, ignore_errors=True)
    for old in os.listdir(PGO):  # profiles of earlier sources
        if old != k and len(old) == 16 and all(c in "0123456789abcdef" for c in old):
            shutil.rmtree(os.path.join(PGO, old), ignore_errors=True)
    say(f"profile {os.path.relpath(out, ROOT)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--force", action="store_true", help="make the profile again")
    ap.add_argument("--env", action="store_true",
                    help="print the variables of a profile-guided build, one NAME=VALUE a line "
                         "(what scripts/setup.sh passes to maturin)")
    args = ap.parse_args()
    profile = make(args.force)
    if args.env:
        env = build_env(profile)
        for name in ("RUSTFLAGS", "CARGO_TARGET_DIR"):
            print(f"{name}={env[name]}")
    else:
        print(profile)


if __name__ == "__main__":
    main()
