"""scripts/pgo.py: the profile of the profile-guided release build (what scripts/setup.sh builds
the extension with). Its output identity with the plain build is checked by
`python3 scripts/compare_outputs.py HEAD . --pgo`; here, its training set and its flags."""

import json
import os
import re

import pytest

from conftest import REPO, load_script


@pytest.fixture(scope="module")
def pgo():
    return load_script("scripts/pgo.py")


def test_training_set_is_compare_outputs_set_cut_short(pgo):
    train = pgo.training_set()
    names = [name for name, _ in train]
    assert any(n.startswith("validation/ns2/") for n in names)
    assert any(n.startswith("examples/") for n in names)
    assert any(n.startswith("scripts/identity/") for n in names)
    assert len(names) == len(pgo.scenarios([], skip_long=False))
    for name, text in train:
        data = json.loads(text)
        assert float(data["duration"]) <= pgo.TRAIN_SECONDS, name
        assert "trace" not in data, name
    # a 1200-s bank run measured over 200-1200 s, cut to 60 s, loses its measurement window
    cut = json.loads(dict(train)["validation/ns2/bic-vs-reno-100m.toml"])
    assert cut["duration"] == pgo.TRAIN_SECONDS and "measure" not in cut


def test_training_runs_the_many_link_event_loop(pgo):
    """The engine runs a second instance of its event loop (pipe-head prefetches) with at least
    PREFETCH_LINKS links: a training run must reach it, or the profile-guided build compiles the
    loop that the 320- to 3 200-flow benchmarks time as cold code (357 ns per packet at 3 200
    flows against 311 with scripts/identity/many-flows.toml in training)."""
    with open(os.path.join(str(REPO), "crates", "tcpf-core", "src", "engine.rs")) as f:
        links = int(re.search(r"const PREFETCH_LINKS: usize = (\d+);", f.read()).group(1))
    flows = max(sum(int(g.get("count", 1)) for g in json.loads(text)["flows"])
                for _, text in pgo.training_set())
    assert 2 + 4 * flows >= links  # a dumbbell: each flow's two access links, each way


def test_build_env_adds_the_profile_and_its_own_target_dir(pgo, monkeypatch):
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=1")
    env = pgo.build_env("/p/tcpf.profdata")
    assert env["RUSTFLAGS"] == "-Cdebuginfo=1 -Cprofile-use=/p/tcpf.profdata"
    assert env["CARGO_TARGET_DIR"] == pgo.USE_TARGET != os.path.join(str(REPO), "target")
    plain = pgo.build_env(None)
    assert plain["RUSTFLAGS"] == "-Cdebuginfo=1" and plain.get("CARGO_TARGET_DIR") == os.environ.get("CARGO_TARGET_DIR")


def test_key_changes_with_the_rust_sources(pgo, tmp_path, monkeypatch):
    rustc = "rustc 1.0"
    train = [("a.toml", "{}")]
    k1 = pgo.key(rustc, train)
    assert k1 == pgo.key(rustc, train) and len(k1) == 16
    assert pgo.key("rustc 2.0", train) != k1
    assert pgo.key(rustc, [("a.toml", '{"duration": 1}')]) != k1
    fake = tmp_path / "crates" / "x" / "src"
    fake.mkdir(parents=True)
    (fake / "lib.rs").write_text("fn a() {}\n")
    for f in ("Cargo.lock", "Cargo.toml"):
        (tmp_path / f).write_text("")
    monkeypatch.setattr(pgo, "ROOT", str(tmp_path))
    before = pgo.key(rustc, train)
    (fake / "lib.rs").write_text("fn a() { let _ = 1; }\n")
    assert pgo.key(rustc, train) != before
