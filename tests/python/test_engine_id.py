"""The engine build's identity (``_core.engine_id()``, ``tcpfriendly.version.engine_id``) that
every run cache keys on: a hash fixed at build time, the same on every call and in every
process; an older extension without it is identified by its file."""
import re
import subprocess
import sys

from tcpfriendly import _core
from tcpfriendly.version import engine_id


def test_engine_id_is_a_stable_hex_string():
    eid = _core.engine_id()
    assert re.fullmatch(r"[0-9a-f]{16}", eid), eid
    assert _core.engine_id() == eid
    assert engine_id() == eid == engine_id()


def test_engine_id_is_the_same_in_another_process():
    code = "from tcpfriendly.version import engine_id; print(engine_id())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == engine_id()


def test_an_extension_without_engine_id_is_identified_by_its_file(monkeypatch, tmp_path):
    """An extension built before ``engine_id`` existed: the hash of its file, so that two
    such builds are not taken for one."""
    import types
    from tcpfriendly import version
    a, b = tmp_path / "a.so", tmp_path / "b.so"
    a.write_bytes(b"build a")
    b.write_bytes(b"build b")
    ids = []
    for f in (a, b, a):
        monkeypatch.setitem(sys.modules, "tcpfriendly._core", types.SimpleNamespace(__file__=str(f)))
        monkeypatch.setattr(sys.modules["tcpfriendly"], "_core", sys.modules["tcpfriendly._core"])
        version.engine_id.cache_clear()
        ids.append(version.engine_id())
    version.engine_id.cache_clear()
    monkeypatch.undo()
    assert ids[0] == ids[2] != ids[1] and ids[0].startswith("file:") and len(ids[0]) == 21
    assert version.engine_id() == _core.engine_id()
