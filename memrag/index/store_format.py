"""The one validation layer for memory folders: every byte read from a folder passes here first.

A memory folder may come from elsewhere (a download, a colleague, a disk that
filled up half-way), so nothing in it is trusted: the manifest must have the
shape memrag writes, the SQLite tables must hold the columns and types memrag
writes, every id must point at a row that exists, and every vector file must
declare exactly the shape its tables imply — checked from the header and the
file size *before* any array is allocated — and hold finite numbers only.
Anything else becomes a `MemoryFormatError` that says what is wrong.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable

import numpy as np

MANIFEST_MAX_BYTES = 4_000_000  # a manifest is a few hundred bytes; refuse to parse a monster
MAX_DIM = 65_536
NPY_HEADER_MAX = 10_000  # numpy's own default limit for a trusted header
_COUNT_KEYS = ("documents", "chunks", "engrams", "triples", "entities")


class MemoryStoreError(ValueError):
    """A memory folder cannot be used as asked; the message says why."""


class MemoryFormatError(MemoryStoreError):
    """The folder is not a memory this version of memrag can open; the message says why."""


def damaged(path: Path | str, reason: str) -> MemoryFormatError:
    return MemoryFormatError(f"this memory cannot be opened: {reason} (in {path})")


# ------------------------------------------------------------------ manifest
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_manifest(text: str | bytes, where: Path | str, format_version: int) -> dict[str, Any]:
    """The manifest as a dict, or MemoryFormatError: JSON of exactly the shape memrag writes."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:  # RecursionError: JSON nested thousands deep
        raise damaged(where, f"manifest.json is not JSON ({str(e)[:200]})") from None
    return validate_manifest(obj, where, format_version)


def validate_manifest(obj: Any, where: Path | str, format_version: int) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise damaged(where, f"manifest.json holds a JSON {type(obj).__name__}, not an object")
    fv = obj.get("format_version")
    if not _is_int(fv) or fv < 1:
        raise damaged(where, f"manifest.json has format_version {fv!r}; memrag formats are whole numbers from 1")
    if fv > format_version:
        raise MemoryFormatError(
            f"{where} was saved in memory format {fv}, newer than this memrag understands ({format_version}); "
            "upgrade memrag")
    emb = obj.get("embedder")
    if not isinstance(emb, dict) or not isinstance(emb.get("model"), str):
        raise damaged(where, "manifest.json does not name its embedder (an object with a 'model' string)")
    dim = emb.get("dim")
    if not _is_int(dim) or not 1 <= dim <= MAX_DIM:
        raise damaged(where, f"manifest.json gives the embedder dimension {_short(dim)}; "
                             f"expected a whole number from 1 to {MAX_DIM}")
    for key, kind in (("name", str), ("fingerprint", str), ("saved_at", str), ("llm", dict), ("params", dict),
                      ("previous", str), ("change", str), ("history", list)):
        if key in obj and not isinstance(obj[key], kind):
            raise damaged(where, f"manifest.json field {key!r} is a {type(obj[key]).__name__}, "
                                 f"not a {kind.__name__}")
    if not all(isinstance(h, str) for h in obj.get("history", [])):
        raise damaged(where, "manifest.json field 'history' must list fingerprints (strings)")
    _check_params(obj.get("params") or {}, where)
    counts = obj.get("counts")
    if counts is not None:
        if not isinstance(counts, dict) or not all(_is_int(counts.get(k)) and counts[k] >= 0 for k in _COUNT_KEYS):
            raise damaged(where, f"manifest.json counts must give {', '.join(_COUNT_KEYS)} as whole numbers")
    return obj


def _check_params(params: dict[str, Any], where: Path | str) -> None:
    """Build parameters the methods read must have their declared kind (an int where an int is read)."""
    from memrag.config import IndexParams

    for f in fields(IndexParams):
        if f.name not in params:
            continue
        v, default = params[f.name], f.default
        ok = (_is_int(v) if isinstance(default, int)
              else isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
        if not ok:
            raise damaged(where, f"manifest.json parameter {f.name!r} is {_short(v)}, "
                                 f"not a {type(default).__name__}")


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


# ------------------------------------------------------------------ SQLite tables
_TEXT, _INT, _REAL = (str,), (int,), (int, float)
_OPT_TEXT, _OPT_INT = (str, type(None)), (int, type(None))
# Per table: (column, kinds accepted) in the order read, and the order of rows (ids are positions).
TABLES: dict[str, tuple[tuple[tuple[str, tuple[type, ...]], ...], str]] = {
    "documents": ((("doc_id", _TEXT), ("title", _TEXT), ("text", _TEXT), ("source", _TEXT), ("kind", _TEXT),
                   ("meta", _OPT_TEXT)), "ord"),
    "chunks": ((("chunk_id", _INT), ("doc_id", _TEXT), ("idx", _INT), ("title", _TEXT), ("text", _TEXT)),
               "chunk_id"),
    "engrams": ((("engram_id", _INT), ("key", _TEXT), ("name", _TEXT), ("type", _TEXT), ("description", _TEXT),
                 ("importance", _INT), ("chunk_id", _INT)), "engram_id"),
    "triples": ((("triple_id", _INT), ("head_key", _TEXT), ("head", _TEXT), ("relation", _TEXT),
                 ("tail_key", _TEXT), ("tail", _TEXT), ("chunk_id", _INT)), "triple_id"),
    "entities": ((("key", _TEXT),), "ord"),
    "extraction_log": ((("chunk_id", _INT), ("status", _TEXT), ("error", _OPT_TEXT), ("raw_reply", _OPT_TEXT),
                        ("prompt_tokens", _OPT_INT), ("completion_tokens", _OPT_INT), ("seconds", _REAL),
                        ("cached", _INT)), "chunk_id"),
    "ledger": ((("data", _TEXT),), "row"),
}
# Tables of memory edits (memrag.index.edits): a folder saved before edits existed has none, which
# reads as no edit made; one that has them is checked like the rest.
EDIT_TABLES: dict[str, tuple[tuple[tuple[str, tuple[type, ...]], ...], str]] = {
    "coref_unlinked": ((("key_a", _TEXT), ("key_b", _TEXT)), "key_a, key_b"),
    "merges": ((("merge_id", _INT), ("joined_key", _TEXT), ("joined_name", _TEXT), ("rows", _TEXT),
                ("names", _TEXT), ("vectors", (bytes,))), "merge_id"),
}


def open_tables(file: Path) -> sqlite3.Connection:
    """A read-only connection to memory.sqlite (as a URI, so any character in the path is safe)."""
    if not file.is_file():
        raise damaged(file.parent, "memory.sqlite is missing")
    return sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)


def read_table(con: sqlite3.Connection, table: str, where: Path | str) -> list[tuple[Any, ...]]:
    """Every row of a table, each value of the kind memrag writes there."""
    columns, order = TABLES[table] if table in TABLES else EDIT_TABLES[table]
    rows = con.execute(f"SELECT {', '.join(c for c, _ in columns)} FROM {table} ORDER BY {order}").fetchall()
    for n, row in enumerate(rows):
        for value, (col, kinds) in zip(row, columns):
            if not isinstance(value, kinds):
                got = "NULL" if value is None else f"{type(value).__name__} {_short(value)}"
                raise damaged(where, f"table {table}, row {n}: column {col} holds {got}")
            if isinstance(value, float) and not math.isfinite(value):
                raise damaged(where, f"table {table}, row {n}: column {col} is {value}")
    return rows


def check_ids(ids: list[int], table: str, where: Path | str) -> None:
    """Row ids are positions (vectors line up with rows), so they must run 0, 1, 2, …"""
    for pos, i in enumerate(ids):
        if i != pos:
            raise damaged(where, f"table {table}: row {pos} has id {i}; ids must run 0, 1, 2, … without gaps")


def check_refs(refs: list[int], n_chunks: int, table: str, where: Path | str) -> None:
    """Every chunk id a row names must be a chunk of this memory (-1 is not 'the last one')."""
    for pos, c in enumerate(refs):
        if not 0 <= c < n_chunks:
            raise damaged(where, f"table {table}, row {pos}: chunk_id {c} is not a chunk of this memory "
                                 f"(it has {n_chunks})")


def has_table(con: sqlite3.Connection, table: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone() is not None


def json_cell(text: str | None, what: str, where: Path | str, default: Any = None, kind: type = dict) -> Any:
    """A JSON object (or another `kind`) stored in a text column."""
    if text is None:
        return default
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise damaged(where, f"{what} is not JSON") from None
    if not isinstance(value, kind):
        raise damaged(where, f"{what} is a JSON {type(value).__name__}, not {'an object' if kind is dict else 'a list'}")
    return value


def merge_record(row: tuple[Any, ...], n_engrams: int, n_triples: int, dim: int, where: Path | str) -> Any:
    """A `merges` row as a MergeRecord: rows by id within the tables, names of text, and exactly one
    finite float32 vector per name."""
    from memrag.index.memory import MergeRecord

    merge_id, joined_key, joined_name, rows_text, names_text, blob = row
    what = f"merge {merge_id}"
    rows = json_cell(rows_text, f"{what}'s rows", where)
    ids: dict[str, list[int]] = {}
    for part, n in (("engrams", n_engrams), ("heads", n_triples), ("tails", n_triples)):
        got = rows.get(part, [])
        if not isinstance(got, list) or not all(_is_int(i) and 0 <= i < n for i in got):
            raise damaged(where, f"{what}'s {part} must list row ids below {n}")
        ids[part] = got
    names = json_cell(names_text, f"{what}'s names", where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise damaged(where, f"{what}'s names must map keys to names")
    if len(blob) != len(names) * dim * 4:
        raise damaged(where, f"{what}'s vectors are {len(blob)} bytes; {len(names)} name(s) need {len(names) * dim * 4}")
    vectors = np.frombuffer(blob, dtype="<f4").reshape(len(names), dim).astype(np.float32)
    if not np.isfinite(vectors).all():
        raise damaged(where, f"{what}'s vectors hold NaN or infinite values")
    return MergeRecord(merge_id, joined_key, joined_name, ids["engrams"], ids["heads"], ids["tails"], names, vectors)


# ------------------------------------------------------------------ vector files
def _npy_header(fh: Any) -> tuple[tuple[Any, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype) from an .npy header, never evaluating more than a literal."""
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    reader: Callable[..., Any] = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(
        version)  # type: ignore[assignment]
    if reader is None:
        raise ValueError(f"npy format version {version[0]}.{version[1]} is not one memrag writes")
    return reader(fh, max_header_size=NPY_HEADER_MAX)


def _checked_header(fh: Any, rows: int, dim: int, where: Path | str) -> tuple[bool, np.dtype]:
    """(fortran_order, dtype) of an .npy file open at its start, if it declares exactly (rows, dim)
    floating-point numbers and its size matches; the file is left at the first data byte."""
    name = Path(fh.name).name
    try:
        shape, fortran, dtype = _npy_header(fh)
    except Exception as e:  # numpy's header parser raises many kinds (ValueError, TokenError, …)
        raise damaged(where, f"{name} has no readable .npy header ({type(e).__name__}: {str(e)[:120]})") from None
    if dtype.hasobject or dtype.kind != "f" or dtype.itemsize not in (4, 8):
        raise damaged(where, f"{name} holds {dtype}, not floating-point numbers (pickled objects are refused)")
    if tuple(shape) != (rows, dim):
        raise damaged(where, f"{name} declares shape {_short(tuple(shape))}; its tables need ({rows}, {dim})")
    expected = fh.tell() + rows * dim * dtype.itemsize
    size = os.fstat(fh.fileno()).st_size
    if size != expected:
        raise damaged(where, f"{name} is {size} bytes; its header implies {expected} (truncated or padded)")
    return bool(fortran), dtype


def _open_vectors(file: Path, where: Path | str) -> Any:
    if not file.is_file():
        raise damaged(where, f"{file.name} is missing")
    return open(file, "rb")


def read_vectors(file: Path, rows: int, dim: int, where: Path | str) -> np.ndarray:
    """A (rows, dim) float32 array from an .npy file whose header and size were checked first."""
    with _open_vectors(file, where) as fh:
        fortran, dtype = _checked_header(fh, rows, dim, where)
        arr = np.fromfile(fh, dtype=dtype, count=rows * dim)
    arr = arr.reshape((rows, dim), order="F" if fortran else "C")
    if not np.isfinite(arr).all():
        raise damaged(where, f"{file.name} holds NaN or infinite values")
    return np.ascontiguousarray(arr, dtype=np.float32)


def check_vector_header(file: Path, rows: int, dim: int, where: Path | str) -> None:
    """The cheap half of `read_vectors` (for listing folders): header and size, no data read."""
    with _open_vectors(file, where) as fh:
        _checked_header(fh, rows, dim, where)
