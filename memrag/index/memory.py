"""Memory: documents, chunks, engrams, entity nodes, triple instances, coreference
candidates, graphs and vectors — what both methods retrieve from.

Vocabulary (DESIGN §3.4): an *entity node* is a normalised key; an *engram* is
one mention of it in one chunk (name, type, description, importance); a
*triple* belongs to the chunk it was extracted from. Chunk, engram and triple
ids are their positions in the lists, so vectors line up with rows.

Building and persistence live in `memrag.index.build` and `memrag.index.store`; this module
holds the data and the read-side queries the methods use.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import faiss
import networkx as nx
import numpy as np

# Query-time searches are single vectors over at most tens of thousands of rows:
# one thread is several times faster than OpenMP's team on a busy 2-core machine.
faiss.omp_set_num_threads(1)

from memrag.index.normalise import entity_key
from memrag.trace import CorefMember

FORMAT_VERSION = 1


@dataclass
class DocRow:
    doc_id: str
    title: str
    text: str
    source: str
    kind: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChunkRow:
    chunk_id: int
    doc_id: str
    index: int
    title: str
    text: str


@dataclass
class EngramRow:
    engram_id: int
    key: str
    name: str
    type: str
    description: str
    importance: int
    chunk_id: int


@dataclass
class TripleRow:
    triple_id: int
    head_key: str
    head: str
    relation: str
    tail_key: str
    tail: str
    chunk_id: int

    @property
    def text(self) -> str:
        return f"{self.head} {self.relation} {self.tail}"


@dataclass
class EntityNode:
    key: str
    name: str  # the most frequent surface form
    type: str  # the most frequent type
    engram_ids: list[int] = field(default_factory=list)
    chunk_ids: list[int] = field(default_factory=list)


@dataclass
class MergeRecord:
    """One merge still in effect, kept so that a split can undo it: the entity that joined another
    (its key and name before the merge), the rows that carried that key then — engrams, triple heads,
    triple tails, by id — and the name and vector each of the two nodes had before, so a split that
    gives a node its old name back gives it its old vector back too (no embedding, byte for byte).
    Which node it joined is wherever those rows are now (a later rename moves it along)."""

    merge_id: int
    joined_key: str
    joined_name: str
    engrams: list[int]
    heads: list[int]
    tails: list[int]
    names: dict[str, str] = field(default_factory=dict)  # key → name before the merge (both nodes)
    vectors: np.ndarray | None = None  # one row per `names` entry, in its order

    def rows(self) -> int:
        return len(self.engrams) + len(self.heads) + len(self.tails)

    def renumbered(self, engram_ids: dict[int, int], triple_ids: dict[int, int]) -> "MergeRecord | None":
        """This record after rows were removed and the rest renumbered (old id → new id; a row
        missing from the map went); None when none of its rows is left."""
        kept = replace(self, engrams=[engram_ids[i] for i in self.engrams if i in engram_ids],
                       heads=[triple_ids[i] for i in self.heads if i in triple_ids],
                       tails=[triple_ids[i] for i in self.tails if i in triple_ids])
        return kept if kept.rows() else None


@dataclass
class ExtractionLog:
    chunk_id: int
    status: str  # ok | failed | imported | passages-only
    error: str = ""
    raw_reply: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    cached: bool = False


class VectorIndex:
    """A faiss flat inner-product index over normalised float32 rows, built in memory."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._index: faiss.IndexFlatIP | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def _faiss(self) -> faiss.IndexFlatIP:
        with self._lock:
            if self._index is None:
                idx = faiss.IndexFlatIP(self.vectors.shape[1])
                if len(self):
                    idx.add(self.vectors)
                self._index = idx
            return self._index

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of shape (n_queries, k'), k' = min(k, rows); ids are row numbers."""
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self))
        if k <= 0:
            return np.zeros((q.shape[0], 0), np.float32), np.zeros((q.shape[0], 0), np.int64)
        return self._faiss().search(q, k)

    def rank_all(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row ranked by cosine to one query (a full sort; exact and stable)."""
        scores = self.vectors @ np.asarray(query, dtype=np.float32).reshape(-1)
        order = np.argsort(-scores, kind="stable")
        return scores[order], order


class Memory:
    def __init__(self, embedder_id: str, dim: int) -> None:
        self.embedder_id = embedder_id
        self.dim = dim
        self.name = ""
        self.llm: dict[str, Any] = {}  # the LLM that built it (backend, model)
        self.params: dict[str, Any] = {}
        self.documents: list[DocRow] = []
        self.chunks: list[ChunkRow] = []
        self.engrams: list[EngramRow] = []
        self.triples: list[TripleRow] = []
        self.extraction_log: dict[int, ExtractionLog] = {}
        self.ledger_rows: list[dict[str, Any]] = []
        # Edits (memrag.index.edits): coreference links a user removed, as sorted key pairs (they
        # apply whenever both nodes exist), and the merges a split can still undo.
        self.coref_unlinked: set[tuple[str, str]] = set()
        self.merges: list[MergeRecord] = []
        self.entities: list[EntityNode] = []
        self.entity_index: dict[str, int] = {}
        self.triples_of: dict[str, list[int]] = {}
        self.chunk_vecs = np.zeros((0, dim), np.float32)
        self.engram_vecs = np.zeros((0, dim), np.float32)
        self.entity_vecs = np.zeros((0, dim), np.float32)
        self.triple_vecs = np.zeros((0, dim), np.float32)
        self._coref_cache: dict[tuple[int, float], dict[str, list[CorefMember]]] = {}
        self._indices: dict[str, VectorIndex] = {}
        self._graphs: dict[str, Any] = {}
        self._fingerprint: tuple[tuple[int, int, int], str] | None = None

    # ------------------------------------------------------------ derived structures
    def rebuild_derived(self) -> None:
        """Entity nodes and per-entity triple lists from engrams and triples (cheap, at load)."""
        names: dict[str, Counter] = {}
        types: dict[str, Counter] = {}
        nodes: dict[str, EntityNode] = {}
        order: list[str] = []
        for e in self.engrams:
            if e.key not in nodes:
                nodes[e.key] = EntityNode(e.key, e.name, e.type)
                order.append(e.key)
                names[e.key], types[e.key] = Counter(), Counter()
            n = nodes[e.key]
            n.engram_ids.append(e.engram_id)
            if e.chunk_id not in n.chunk_ids:
                n.chunk_ids.append(e.chunk_id)
            names[e.key][e.name] += 1
            if e.type != "other":
                types[e.key][e.type] += 1
        for k in order:
            # most frequent surface form; ties go to the first seen (Counter keeps insertion order)
            nodes[k].name = names[k].most_common(1)[0][0]
            nodes[k].type = types[k].most_common(1)[0][0] if types[k] else "other"
        self.entities = [nodes[k] for k in order]
        self.entity_index = {k: i for i, k in enumerate(order)}
        self.triples_of = {}
        for t in self.triples:
            self.triples_of.setdefault(t.head_key, []).append(t.triple_id)
            if t.tail_key != t.head_key:
                self.triples_of.setdefault(t.tail_key, []).append(t.triple_id)
        self._coref_cache.clear()
        self._indices.clear()
        self._graphs.clear()

    def index(self, kind: str) -> VectorIndex:
        """faiss flat index over 'chunks' | 'engrams' | 'entities' | 'triples', built on first use."""
        if kind not in self._indices:
            vecs = {"chunks": self.chunk_vecs, "engrams": self.engram_vecs,
                    "entities": self.entity_vecs, "triples": self.triple_vecs}[kind]
            self._indices[kind] = VectorIndex(vecs)
        return self._indices[kind]

    def copy(self) -> "Memory":
        """A new Memory with the same rows and vectors (rows and arrays shared, lists new): an edit
        replaces what it changes in the copy and leaves this one, which others may hold, as it is."""
        m = Memory(self.embedder_id, self.dim)
        m.name, m.llm, m.params = self.name, dict(self.llm), dict(self.params)
        m.documents, m.chunks = list(self.documents), list(self.chunks)
        m.engrams, m.triples = list(self.engrams), list(self.triples)
        m.extraction_log, m.ledger_rows = dict(self.extraction_log), list(self.ledger_rows)
        m.coref_unlinked = set(self.coref_unlinked)
        m.merges = [replace(r, engrams=list(r.engrams), heads=list(r.heads), tails=list(r.tails),
                            names=dict(r.names)) for r in self.merges]
        m.chunk_vecs, m.engram_vecs = self.chunk_vecs, self.engram_vecs
        m.entity_vecs, m.triple_vecs = self.entity_vecs, self.triple_vecs
        # derived structures are shared until the edit rebuilds them (rebuild_derived replaces, never mutates)
        m.entities, m.entity_index, m.triples_of = self.entities, self.entity_index, self.triples_of
        return m

    # ------------------------------------------------------------ lookups
    def entity(self, key: str) -> EntityNode | None:
        i = self.entity_index.get(key)
        return None if i is None else self.entities[i]

    def entity_vector(self, key: str) -> np.ndarray:
        return self.entity_vecs[self.entity_index[key]]

    def chunk_title_text(self, chunk_id: int) -> tuple[str, str]:
        c = self.chunks[chunk_id]
        return c.title, c.text

    def is_empty(self) -> bool:
        return not self.chunks

    # ------------------------------------------------------------ coreference candidates
    def is_unlinked(self, a: str, b: str) -> bool:
        """True when a user removed the coreference link between nodes `a` and `b` (either way round)."""
        return bool(self.coref_unlinked) and ((a, b) if a < b else (b, a)) in self.coref_unlinked

    def unlink_depth(self) -> int:
        """How many more neighbours a name search must fetch so that, after dropping removed links,
        every node still has as many as asked for (the most links removed from any one node)."""
        if not self.coref_unlinked:
            return 0
        count = Counter(k for pair in self.coref_unlinked for k in pair)
        return max(count.values())

    def coref_sets(self, top: int = 5, threshold: float = 0.8) -> dict[str, list[CorefMember]]:
        """Per node: its nearest *other* nodes by name vector, at most `top`, cosine ≥ threshold.

        Not symmetric and not transitive; derived from stored vectors, so any
        (top, threshold) can be asked for at query time. Cached per pair.
        """
        cache_key = (int(top), round(float(threshold), 6))
        if cache_key in self._coref_cache:
            return self._coref_cache[cache_key]
        out: dict[str, list[CorefMember]] = {}
        n = len(self.entities)
        if n and top > 0:
            scores, ids = self.index("entities").search(self.entity_vecs, top + 1 + self.unlink_depth())
            for i, node in enumerate(self.entities):
                members = []
                for s, j in zip(scores[i], ids[i]):
                    if j < 0 or j == i or s < threshold or self.is_unlinked(node.key, self.entities[j].key):
                        continue
                    other = self.entities[j]
                    members.append(CorefMember(other.key, other.name, float(s)))
                out[node.key] = members[:top]
        self._coref_cache[cache_key] = out
        return out

    def adopt_coref_sets(self, other: "Memory") -> bool:
        """Take `other`'s cached coreference sets when both hold the same nodes, name vectors and
        removed links (another Memory object opened from the same version, e.g. the app's); True
        when taken. Sets are derived from exactly those, so nothing is trusted that is not checked."""
        same = ([n.key for n in self.entities] == [n.key for n in other.entities]
                and [n.name for n in self.entities] == [n.name for n in other.entities]
                and self.coref_unlinked == other.coref_unlinked
                and np.array_equal(self.entity_vecs, other.entity_vecs))
        if same:
            for k, v in list(other._coref_cache.items()):  # a copy: another session may be adding to it
                self._coref_cache.setdefault(k, v)
        return same

    def carry_coref_sets(self, before: "Memory", top: int, threshold: float) -> None:
        """Fill this memory's (top, threshold) coreference sets from `before`'s (an edit's source,
        when it has them cached), searching again only the nodes an edit can have changed: nodes
        whose name vector is new, changed or gone, or whose removed links changed; nodes that listed
        one of those; and nodes a new or changed vector now comes near enough to enter. The rest keep
        their sets (all sets of a 19k-node memory take seconds; an edit touches a handful)."""
        cache_key = (int(top), round(float(threshold), 6))
        old = before._coref_cache.get(cache_key)
        if old is None or cache_key in self._coref_cache:
            return
        now = {n.key: i for i, n in enumerate(self.entities)}
        was = {n.key: i for i, n in enumerate(before.entities)}
        changed = {k for k in now.keys() ^ was.keys()} | {
            k for k, i in now.items() if k in was and not np.array_equal(self.entity_vecs[i], before.entity_vecs[was[k]])}
        changed |= {k for pair in self.coref_unlinked ^ before.coref_unlinked for k in pair}
        redo = {k for k in changed if k in now}
        redo |= {k for k, members in old.items() if k in now and any(m.key in changed for m in members)}
        moved = [now[k] for k in changed if k in now]
        if moved:
            sims = self.entity_vecs @ self.entity_vecs[moved].T  # every node against each moved one
            for k, i in now.items():
                members = old.get(k, [])
                floor = threshold if len(members) < top else max(threshold, members[-1].similarity)
                if (sims[i] >= floor).any():
                    redo.add(k)
        out = {k: old[k] for k in now if k not in redo and k in old}
        rows = sorted(now[k] for k in now if k not in out)
        if rows and top > 0:
            scores, ids = self.index("entities").search(self.entity_vecs[rows], top + 1 + self.unlink_depth())
            for r, i in enumerate(rows):
                node = self.entities[i]
                members = [CorefMember(self.entities[j].key, self.entities[j].name, float(s))
                           for s, j in zip(scores[r], ids[r])
                           if j >= 0 and j != i and s >= threshold and not self.is_unlinked(node.key, self.entities[j].key)]
                out[node.key] = members[:top]
        elif top <= 0:
            out = {}
        self._coref_cache[cache_key] = {n.key: out.get(n.key, []) for n in self.entities}

    def coref_of(self, key: str, top: int = 5, threshold: float = 0.8) -> list[CorefMember]:
        """One node's candidates: a single-row search unless the whole set is cached
        (all sets of a 19k-entity memory take seconds; one row takes a millisecond)."""
        cached = self._coref_cache.get((int(top), round(float(threshold), 6)))
        if cached is not None:
            return cached.get(key, [])
        i = self.entity_index.get(key)
        if i is None or top <= 0:
            return []
        scores, ids = self.index("entities").search(self.entity_vecs[i:i + 1], top + 1 + self.unlink_depth())
        out = []
        for s, j in zip(scores[0], ids[0]):
            if j < 0 or j == i or s < threshold or self.is_unlinked(key, self.entities[j].key):
                continue
            out.append(CorefMember(self.entities[j].key, self.entities[j].name, float(s)))
        return out[:top]

    # ------------------------------------------------------------ graphs
    @property
    def triple_graph(self) -> nx.MultiDiGraph:
        """Directed: head → tail per triple instance, with relation and source chunk."""
        if "triple" not in self._graphs:
            g = nx.MultiDiGraph()
            for node in self.entities:
                g.add_node(node.key, name=node.name, type=node.type)
            for t in self.triples:
                g.add_edge(t.head_key, t.tail_key, key=t.triple_id, relation=t.relation, chunk_id=t.chunk_id)
            self._graphs["triple"] = g
        return self._graphs["triple"]

    @property
    def cooccurrence_graph(self) -> nx.Graph:
        """Undirected: entities sharing a chunk; weight = number of shared chunks."""
        if "cooc" not in self._graphs:
            g = nx.Graph()
            per_chunk: dict[int, list[str]] = {}
            for node in self.entities:
                g.add_node(node.key)
                for c in node.chunk_ids:
                    per_chunk.setdefault(c, []).append(node.key)
            for keys in per_chunk.values():
                for a_i in range(len(keys)):
                    for b_i in range(a_i + 1, len(keys)):
                        a, b = keys[a_i], keys[b_i]
                        w = g.get_edge_data(a, b, {}).get("weight", 0)
                        g.add_edge(a, b, weight=w + 1)
            self._graphs["cooc"] = g
        return self._graphs["cooc"]

    # ------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """Hash of the content both methods retrieve from. Cached: every trace carries it,
        and hashing a large memory costs more than a whole query. Rows are only ever
        appended to one Memory object (an edit or a removal makes a new one), so their counts
        tell when the cache is stale. Removed coreference links count (they change what
        NeuroPath and HippoRAG 2 read); a memory without any hashes as it did before edits."""
        sizes = (len(self.chunks), len(self.engrams), len(self.triples))
        if self._fingerprint is not None and self._fingerprint[0] == sizes:
            return self._fingerprint[1]
        h = hashlib.sha256()
        h.update(json.dumps([FORMAT_VERSION, self.embedder_id]).encode())
        for c in self.chunks:
            h.update(json.dumps([c.doc_id, c.title, c.text]).encode())
        for e in self.engrams:
            h.update(json.dumps([e.key, e.name, e.type, e.description, e.importance, e.chunk_id]).encode())
        for t in self.triples:
            h.update(json.dumps([t.head, t.relation, t.tail, t.chunk_id]).encode())
        if self.coref_unlinked:
            h.update(json.dumps(["coref_unlinked", sorted(self.coref_unlinked)]).encode())
        self._fingerprint = (sizes, h.hexdigest()[:16])
        return self._fingerprint[1]

    def stats(self) -> dict[str, int]:
        sets = self.coref_sets(self.params.get("coref_top", 5), self.params.get("coref_threshold", 0.8))
        return {
            "documents": len(self.documents),
            "chunks": len(self.chunks),
            "entities": len(self.entities),
            "engrams": len(self.engrams),
            "triples": len(self.triples),
            "coref_sets": sum(1 for v in sets.values() if v),
            "failures": sum(1 for x in self.extraction_log.values() if x.status == "failed"),
        }


def key_of(name: str) -> str:
    return entity_key(name)
