"""The whole memory as one map: every entity placed once, its links, laid out ahead of drawing.

A layout of ~19,000 entities takes seconds, so it is computed once per memory version (the
memory's content fingerprint) and kept on disk under the cache folder; opening the explorer again,
or in another process, reads it back in milliseconds.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import igraph as ig
import numpy as np

from memrag.config import default_cache_dir
from memrag.index.memory import Memory

LAYOUT_VERSION = 1  # bump when the layout changes, so old cached files are not read
SEED = 7
ITERATIONS = 300
GAP = 0.6  # space around each packed component, in units of sqrt(entities)


@dataclass(frozen=True)
class MemoryMap:
    """Entities in memory order with fixed positions (both axes in [-1, 1]) and the undirected
    entity links (one per linked pair, however many triples join them)."""

    fingerprint: str
    keys: list[str]
    names: list[str]
    types: list[str]
    x: np.ndarray
    y: np.ndarray
    degree: np.ndarray  # distinct linked entities
    links: np.ndarray  # (m, 2) entity positions in `keys`
    position: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.position.update({k: i for i, k in enumerate(self.keys)})

    def __len__(self) -> int:
        return len(self.keys)


def _links(memory: Memory, index: dict[str, int]) -> np.ndarray:
    pairs = {tuple(sorted((index[t.head_key], index[t.tail_key]))) for t in memory.triples
             if t.head_key != t.tail_key and t.head_key in index and t.tail_key in index}
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def _component_layout(g: ig.Graph, members: list[int], rng: np.random.Generator) -> np.ndarray:
    """One connected component laid out on its own, centred, scaled to radius sqrt(size) so a
    component's area on the map grows with how many entities it holds."""
    if len(members) == 1:
        return np.zeros((1, 2))
    sub = g.subgraph(members)
    start = rng.uniform(-1, 1, size=(len(members), 2)) * np.sqrt(len(members))
    xy = np.array(sub.layout_fruchterman_reingold(seed=start.tolist(), niter=ITERATIONS,
                                                  grid=len(members) > 1000).coords)
    xy -= xy.mean(axis=0)
    # a few long tails should not push the island's neighbours away: scale by most of it
    radius = float(np.percentile(np.sqrt((xy ** 2).sum(axis=1)), 90)) or 1.0
    return xy / radius * np.sqrt(len(members))


def _layout(n: int, links: np.ndarray) -> np.ndarray:
    """Each connected component laid out alone (Fruchterman-Reingold from seeded starting points,
    so a memory always gets the same picture), then packed largest first on a sunflower spiral:
    the biggest island in the middle, small ones and lone entities around it, none on top of
    another's centre. Scaled into [-1, 1] on both axes."""
    if n == 0:
        return np.zeros((0, 2))
    rng = np.random.default_rng(SEED)
    g = ig.Graph(n=n, edges=links.tolist())
    components = sorted(g.connected_components(), key=lambda c: (-len(c), c[0]))
    # igraph's layouts also draw from its own generator (Python's random by default): seed one
    # for this layout and give the default back after, so the picture is the same every time
    ig.set_random_number_generator(random.Random(SEED))
    try:
        return _packed(g, components, rng, n)
    finally:
        ig.set_random_number_generator(random)


def _packed(g: ig.Graph, components: list[list[int]], rng: np.random.Generator, n: int) -> np.ndarray:
    xy = np.zeros((n, 2))
    golden = np.pi * (3 - np.sqrt(5))
    inner, packed = 0.0, 0.0  # radius of the middle island; area packed around it so far
    for k, members in enumerate(components):
        local = _component_layout(g, members, rng)
        radius = np.sqrt(len(members)) + GAP
        if k == 0:
            centre, inner = np.zeros(2), radius
        else:
            packed += np.pi * radius ** 2
            dist = inner + radius + np.sqrt(packed / np.pi)
            centre = dist * np.array([np.cos(k * golden), np.sin(k * golden)])
        xy[members] = local + centre
    xy -= (xy.max(axis=0) + xy.min(axis=0)) / 2
    span = np.abs(xy).max() or 1.0
    return xy / span


def _cache_file(fingerprint: str, cache_dir: Path | None) -> Path:
    return (cache_dir or default_cache_dir()) / "layouts" / f"map-v{LAYOUT_VERSION}-{fingerprint}.npz"


def _read(path: Path, memory: Memory, fingerprint: str) -> MemoryMap | None:
    try:
        with np.load(path, allow_pickle=False) as f:
            keys = json.loads(str(f["keys"]))
            xy, links = f["xy"], f["links"]
    except (OSError, ValueError, KeyError):
        return None  # absent or damaged: computed again
    if keys != [n.key for n in memory.entities] or xy.shape != (len(keys), 2):
        return None
    return _made(memory, fingerprint, xy, links)


def _made(memory: Memory, fingerprint: str, xy: np.ndarray, links: np.ndarray) -> MemoryMap:
    n = len(memory.entities)
    degree = np.bincount(links.ravel(), minlength=n) if links.size else np.zeros(n, dtype=np.int64)
    return MemoryMap(fingerprint, [e.key for e in memory.entities], [e.name for e in memory.entities],
                     [e.type or "other" for e in memory.entities], xy[:, 0].copy(), xy[:, 1].copy(),
                     degree, links)


def _write(path: Path, keys: list[str], xy: np.ndarray, links: np.ndarray) -> None:
    """Write-then-rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=np.array(json.dumps(keys)), xy=xy, links=links)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)  # a read-only or full cache only costs the next open its layout


def memory_map(memory: Memory, cache_dir: Path | None = None) -> MemoryMap:
    """The memory's map, from the cache when this version was laid out before."""
    fingerprint = memory.fingerprint()
    path = _cache_file(fingerprint, cache_dir)
    cached = _read(path, memory, fingerprint)
    if cached is not None:
        return cached
    index = {n.key: i for i, n in enumerate(memory.entities)}
    links = _links(memory, index)
    xy = _layout(len(index), links)
    _write(path, list(index), xy, links)
    return _made(memory, fingerprint, xy, links)
