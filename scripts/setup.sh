#!/usr/bin/env bash
# Set up a development/run environment in ./.venv (idempotent; safe to re-run):
#   - system packages when missing and apt-get is usable as root: a C toolchain,
#     python3-venv, Debian's ns2 (the reference simulator for cross-checks) and Debian's
#     chromium (headless: tests/python/test_report.py renders the HTML reports in it);
#     tshark and tcptrace (tests/python/test_trace.py reads the pcap traces with them);
#     Debian's ns-3 (libns3-dev, with g++ and pkg-config: benchmarks/vs_ns2.py times it,
#     tests/python/test_bench_ns3.py runs it);
#   - Rust via rustup when cargo is missing;
#   - .venv with the Python dependencies (pyproject.toml, extras "test");
#   - the simulator extension tcpfriendly._core built in RELEASE mode, profile-guided
#     (scripts/pgo.py; TCPF_NO_PGO=1 for a plain build), and the package installed in editable mode (so `.venv/bin/tcpf` and `import tcpfriendly` work).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (Python >= 3.9 is required)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' \
    || die "Python >= 3.9 is required, found $("$PYTHON" --version 2>&1)"

# --- system packages (only what is missing; only with apt-get as root) ---------------------
can_apt=0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then can_apt=1; fi
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
if [ ! -x .venv/bin/python ] && ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    need+=(python3-venv)
fi
want_ns2=0
command -v ns >/dev/null 2>&1 || want_ns2=1
want_chromium=0
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || want_chromium=1
want_traces=()   # readers of the packet traces (tests/python/test_trace.py)
command -v tshark >/dev/null 2>&1 || want_traces+=(tshark)
command -v tcptrace >/dev/null 2>&1 || want_traces+=(tcptrace)
want_ns3=()      # ns-3 for benchmarks/vs_ns2.py (tests/python/test_bench_ns3.py)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists ns3-core; then want_ns3+=(libns3-dev pkg-config); fi
if [ ${#want_ns3[@]} -gt 0 ] && ! command -v c++ >/dev/null 2>&1; then want_ns3+=(g++); fi
if [ ${#need[@]} -gt 0 ] || [ $want_ns2 = 1 ] || [ $want_chromium = 1 ] || [ ${#want_traces[@]} -gt 0 ] \
    || [ ${#want_ns3[@]} -gt 0 ]; then
    if [ $can_apt = 1 ]; then
        say "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || say "warning: apt-get update failed"
        if [ ${#need[@]} -gt 0 ]; then
            say "installing ${need[*]}"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null \
                || die "apt-get install ${need[*]} failed"
        fi
        if [ $want_ns2 = 1 ]; then
            say "installing ns2 (reference simulator for cross-checks)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null \
                || say "warning: could not install ns2; ns-2 cross-checks will be skipped"
        fi
        if [ $want_chromium = 1 ]; then
            say "installing chromium (headless browser for the HTML report tests)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null \
                || say "warning: could not install chromium; the browser checks of tcpf report will be skipped"
        fi
        if [ ${#want_traces[@]} -gt 0 ]; then
            say "installing ${want_traces[*]} (they read the packet traces in the trace tests)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want_traces[@]}" >/dev/null \
                || say "warning: could not install ${want_traces[*]}; the trace readers' checks will be skipped"
        fi
        if [ ${#want_ns3[@]} -gt 0 ]; then
            say "installing ${want_ns3[*]} (ns-3, the benchmark's third simulator)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want_ns3[@]}" >/dev/null \
                || say "warning: could not install ${want_ns3[*]}; ns-3 will not be timed or tested"
        fi
    else
        [ ${#need[@]} -gt 0 ] && die "missing system packages: ${need[*]} (install them, or re-run as root with apt-get)"
        if [ $want_ns2 = 1 ]; then
            say "ns-2 (\`ns\`) not found and apt-get is not usable here; ns-2 cross-checks will be skipped"
        fi
        if [ $want_chromium = 1 ]; then
            say "chromium not found and apt-get is not usable here; the browser checks of tcpf report will be skipped"
        fi
        if [ ${#want_ns3[@]} -gt 0 ]; then
            say "ns-3 (libns3-dev) not found and apt-get is not usable here; the benchmark will not time it"
        fi
    fi
else
    say "system packages present (cc, ns $(command -v ns), chromium, tshark, tcptrace, ns-3 $(pkg-config --modversion ns3-core))"
fi

# --- Rust --------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    elif command -v curl >/dev/null 2>&1; then
        say "installing Rust (rustup, minimal profile)"
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y -q --profile minimal >/dev/null
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        die "cargo not found; install Rust from https://rustup.rs"
    fi
fi
say "rust: $(cargo --version)"

# --- virtual environment and Python dependencies ---------------------------------------------
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$PYTHON" -m venv .venv
fi
VPY="$ROOT/.venv/bin/python"
if ! "$VPY" -c 'import maturin' >/dev/null 2>&1; then
    say "installing maturin"
    "$VPY" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2"
fi

# --- build the extension (release) and install the package + dependencies --------------------
log="$ROOT/target/setup-build.log"
mkdir -p "$ROOT/target"
: >"$log"
# Profile-guided: scripts/pgo.py builds the engine instrumented, runs the ns-2 bank, the examples
# and the identity mixes (60 s simulated each) and merges the counts (~2 min, once per change of
# the Rust sources); the extension is then built with them in target/pgo/use. Same results,
# ~10 % faster. TCPF_NO_PGO=1, or no llvm-profdata for this rustc, gives the plain build.
pgo_env=()
if [ "${TCPF_NO_PGO:-0}" != 1 ]; then
    say "profile for a profile-guided build (scripts/pgo.py; the first time takes ~2 minutes)"
    if vars=$("$VPY" scripts/pgo.py --env 2>>"$log"); then
        mapfile -t pgo_env <<<"$vars"   # RUSTFLAGS=... CARGO_TARGET_DIR=... (pgo.build_env)
    else
        say "warning: no profile-guided build here ($(grep '^pgo: ' "$log" | tail -n 1); log: $log); building without it"
    fi
fi
say "building tcpfriendly._core (cargo --release${pgo_env:+, profile-guided}; the first build takes a few minutes) and installing dependencies"
if ! env "${pgo_env[@]}" VIRTUAL_ENV="$ROOT/.venv" PATH="$ROOT/.venv/bin:$PATH" \
        "$ROOT/.venv/bin/maturin" develop --release --extras test >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "build failed (full log: $log)"
fi
"$VPY" -c 'import tcpfriendly, tcpfriendly._core' \
    || die "tcpfriendly._core does not import after the build (log: $log)"
[ -x .venv/bin/tcpf ] || die ".venv/bin/tcpf was not installed"
say "ready: tcpfriendly $("$VPY" -c 'import tcpfriendly; print(tcpfriendly.__version__)') in .venv (try: .venv/bin/tcpf run examples/quickstart.toml)"
