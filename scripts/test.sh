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

say "pytest tests/python"
.venv/bin/python -m pytest -q tests/python
say "all tests passed"
