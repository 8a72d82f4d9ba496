"""Fuzzing the parsers of memory folders (issue 15): manifests, .npy headers and recordings files.
Whatever the bytes, opening either succeeds or raises MemoryFormatError — quickly, without
allocating what a header claims and without any other exception."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import benchmark_document
from memrag.llm.recordings import FILE_NAME, Recordings, RecordingsFormatError
from scripted import HashEmbedder, ScriptedLLM

FAST = settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """One small memory, built once; each example damages a copy of one of its files."""
    path = tmp_path_factory.mktemp("fuzz") / "mem"
    docs = [benchmark_document("d1", "Ada", "Ada was born in Port Alder.", "t")]
    reply = {"entities": [{"name": "Ada", "type": "person", "description": "a baker", "importance": 3}],
             "triples": [["Ada", "born in", "Port Alder"]]}
    run_build(build_memory(path, docs, ScriptedLLM({"index.extract": [reply]}), HashEmbedder(dim=8),
                           IndexParams()))
    return path


def _opens_or_refuses(path: Path) -> None:
    for fn in (store.check, store.load):
        try:
            fn(path)
        except store.MemoryFormatError:
            pass


def _replace(template: Path, name: str, data: bytes) -> bytes:
    """Put `data` in the template's file `name`; returns what was there."""
    vdir = store.current_version_dir(template)
    original = (vdir / name).read_bytes()
    (vdir / name).write_bytes(data)
    return original


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20)
manifest_keys = st.sampled_from(["format_version", "embedder", "name", "llm", "params", "fingerprint", "counts",
                                 "saved_at", "model", "dim", "chunks", "coref_top"])


@st.composite
def manifests(draw) -> object:
    """Arbitrary JSON, or the real manifest with some fields (at any depth) replaced by arbitrary JSON."""
    if draw(st.booleans()):
        return draw(json_values)
    man = {"format_version": 1, "embedder": {"model": "hash-test", "dim": 8}, "name": "", "llm": {},
           "params": {"coref_top": 5, "coref_threshold": 0.8}, "fingerprint": "x",
           "counts": {"documents": 1, "chunks": 1, "engrams": 2, "triples": 1, "entities": 2}}
    for _ in range(draw(st.integers(1, 3))):
        key, value = draw(manifest_keys), draw(json_values)
        # An earlier replacement may have turned a nested table into a non-table: pick among what is still one.
        nested = [man[k] for k in ("embedder", "counts", "params") if isinstance(man.get(k), dict)]
        target = draw(st.sampled_from([man, *nested]))
        target[key] = value
    return man


@FAST
@given(manifest=manifests())
def test_any_manifest_opens_or_is_refused(template, manifest):
    original = _replace(template, "manifest.json", json.dumps(manifest).encode())
    try:
        _opens_or_refuses(template)
    finally:
        _replace(template, "manifest.json", original)


@FAST
@given(data=st.binary(max_size=300))
def test_any_manifest_bytes_open_or_are_refused(template, data):
    original = _replace(template, "manifest.json", data)
    try:
        _opens_or_refuses(template)
    finally:
        _replace(template, "manifest.json", original)


_descr = st.sampled_from(["<f4", "<f8", ">f4", "|O", "<i8", "|b1", "<c8", "V8", "<U4", "f4", "O"]) | st.text(max_size=8)
_dims = st.sampled_from([0, 1, 2, 8, -1, 10**9, 2**63, 384]) | st.integers(-5, 20)


@st.composite
def npy_headers(draw) -> bytes:
    """An .npy file: magic, a header dict literal (well-formed or not) and some data bytes."""
    shape = tuple(draw(st.lists(_dims, max_size=3)))
    fields = {"descr": draw(_descr), "fortran_order": draw(st.booleans() | st.integers(0, 2)), "shape": shape}
    header = draw(st.sampled_from([repr(fields), repr(fields)[:-3], str(list(fields.values())),
                                   "{'descr': '<f4', 'shape': (" + "(" * 50]))
    header = (header + " " * draw(st.integers(0, 20)) + "\n").encode("latin1", "replace")
    version = draw(st.sampled_from([b"\x01\x00", b"\x02\x00", b"\x03\x00", b"\x09\x09"]))
    length = len(header).to_bytes(2 if version == b"\x01\x00" else 4, "little")
    return b"\x93NUMPY" + version + length + header + draw(st.binary(max_size=128))


@FAST
@given(data=npy_headers() | st.binary(max_size=200))
def test_any_npy_file_opens_or_is_refused(template, data):
    name = "engram_vecs.npy"
    original = _replace(template, name, data)
    try:
        _opens_or_refuses(template)
    finally:
        _replace(template, name, original)


def test_a_real_npy_of_the_right_shape_still_opens(template):
    vdir = store.current_version_dir(template)
    original = (vdir / "engram_vecs.npy").read_bytes()
    arr = np.load(vdir / "engram_vecs.npy")
    np.save(vdir / "engram_vecs.npy", arr.astype(np.float64))  # another float width is read as float32
    try:
        assert np.array_equal(store.load(template).engram_vecs, arr)
    finally:
        _replace(template, "engram_vecs.npy", original)


lines = st.one_of(st.text(max_size=60), json_values.map(json.dumps))
header_lines = st.one_of(lines, st.fixed_dictionaries(
    {"format": st.sampled_from([1, 0, "1", None]), "identity": json_values},
    optional={"questions": json_values}).map(json.dumps))


@FAST
@given(header=header_lines, body=st.lists(lines, max_size=4))
def test_any_recordings_file_opens_or_is_refused(tmp_path_factory, header, body):
    folder = tmp_path_factory.mktemp("rec")
    (folder / FILE_NAME).write_text("\n".join([header, *body]), encoding="utf-8", errors="surrogatepass")
    try:
        Recordings.open(folder)
    except RecordingsFormatError:
        pass
    finally:
        shutil.rmtree(folder)
