#!/usr/bin/env bash
# Build everything (scripts/setup.sh) and run all tests: the Rust workspace in release mode
# (the PyO3 crate is excluded: it only links inside a Python process) and the Python tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf 'test: %s\n' "$*"; }

bash scripts/setup.sh
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"

say "cargo test --release --workspace --exclude tcpf-py"
cargo test --release --workspace --exclude tcpf-py

# The Python tests over the machine's cores (pytest-xdist, from the `test` extras), at most 4:
# about 11 minutes alone on a 2-core machine, about 7.5 with two workers. TCPF_TEST_WORKERS=N
# overrides (0: no workers, every test in this process).
workers="${TCPF_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
[[ "$workers" =~ ^[0-9]+$ ]] || { echo "test: TCPF_TEST_WORKERS must be a whole number, not '$workers'" >&2; exit 2; }
if [ -z "${TCPF_TEST_WORKERS:-}" ]; then
    if [ "$workers" -gt 4 ]; then workers=4; elif [ "$workers" -lt 2 ]; then workers=0; fi
fi
say "pytest tests/python ($([ "$workers" = 0 ] && echo "in one process" || echo "$workers workers"))"
.venv/bin/python -m pytest -q -n "$workers" tests/python
say "all tests passed"
