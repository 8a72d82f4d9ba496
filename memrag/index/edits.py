"""Edits to a memory — merge, split, unlink-coref, rename, remove-triple, add-triple — each a new
version of the folder (so `store.undo` and `index --use` go back), logged in the folder's edit log.

Each edit works on a copy of the memory (`Memory.copy`) and changes the rows every method reads;
what is derived from rows follows by itself when the copy is rebuilt: entity nodes and their
mentions (EcphoryRAG's engrams, its co-occurrence graph), NeuroPath's triples per entity,
coreference candidates (derived from name vectors, minus the links a user removed), and HippoRAG 2's
phrase / fact / synonymy graph (cached per Memory object, and an edited memory is a new object).
Only the vectors of what changed are computed again; every other row keeps its vector byte for byte:

- merge A into B: A's mentions and triple ends take B's key (their names, descriptions and triple
  texts stay as extracted, so no engram or triple vector changes); A's node goes; B's node is
  embedded again only if its name (the most frequent surface form) changed. The merge is recorded
  (`MergeRecord`) with the rows it moved and both nodes' names and vectors before it.
- split E: undoes the latest merge still on record whose rows E now holds (or the one that joined
  `joined`): those rows take the key they had back; a node whose name is what it was before the
  merge gets its vector from the record (no embedding), any other is embedded. Rows that arrived
  on E by a later build are E's and stay.
- unlink-coref A B: the pair is never a coreference candidate (either way round, at any top or
  threshold a query asks for) nor a HippoRAG 2 synonymy edge; no vector changes.
- rename E to N: every mention of E is named N and E's key becomes N's; triples naming E say N; the
  vectors of those mentions, those triples and E's node are embedded again.
- remove-triple T: that triple instance and its vector go; other triples are renumbered in order.
- add-triple H R T in passage P: a triple instance of that passage, with a mention of each end that
  the passage does not mention yet (as the extraction adds missing ends); its vector, and those of
  new mentions and new nodes, are embedded.

One rule for the app and the command line: `edit_memory` refuses the shipped sample memory
(`memrag.sample`; edits go to a copy, `memrag.index.copies`) and holds the folder's writer lock
from loading to saving.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from memrag.embed import LazyEmbedder
from memrag.index import store
from memrag.index.build import embed_entities, engram_text
from memrag.index.cleanup import is_entity_name, value_type
from memrag.index.extract import MAX_NAME
from memrag.index.memory import EngramRow, EntityNode, Memory, MergeRecord, TripleRow
from memrag.index.normalise import entity_key

KINDS = ("merge", "split", "unlink-coref", "rename", "remove-triple", "add-triple")
MAX_RELATION = 200
UNCHANGED = "Nothing was changed."
SAMPLE_REMEDY = ("Edits go to a copy: the Memory page offers to make one (or copy the folder and edit that). "
                 + UNCHANGED)


class EditError(store.MemoryStoreError):
    """An edit cannot be made as asked (an unknown entity, a merge of an entity with itself, a
    passage that does not exist…); the message says why, and nothing was changed."""


@dataclass(frozen=True)
class Edit:
    """One edit as asked: its kind and its arguments (names, ids), as the log and the CLI hold it."""

    kind: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EditDone:
    """What an edit did: in words, the notes worth reading, and what changed (for pages to show)."""

    kind: str
    text: str
    notes: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()  # keys of the nodes the edit made, changed or removed
    triples: tuple[int, ...] = ()  # ids (in the edited memory) of triples added or changed
    embedded: int = 0  # vectors computed for the edit
    version: str = ""  # filled in by `edit_memory`
    # the edited memory as saved, its coreference sets computed (a page may keep it open)
    memory: Memory | None = field(default=None, compare=False, repr=False)


# ------------------------------------------------------------------ finding what an edit names
def find_entity(memory: Memory, name: str) -> EntityNode:
    """The entity node `name` names (by its key: case, accents and punctuation do not matter), or an
    EditError that says why not: a name merged into another node, or the nearest real names."""
    key = entity_key(name or "")
    if not key:
        raise EditError(f"{name!r} names no entity (it has no letters or digits). {UNCHANGED}")
    node = memory.entity(key)
    if node is not None:
        return node
    holder = merged_into(memory, key)
    if holder is not None:
        raise EditError(f"{name!r} was merged into {holder.name!r}: name that entity, or split {holder.name!r} "
                        f"first. {UNCHANGED}")
    names = [n.name for n in memory.entities]
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    valued = any(key in (t.head_key, t.tail_key) for t in memory.triples)
    hint = (f" (did you mean {', '.join(map(repr, near))}?)" if near else "") + (
        "; it appears in triples only as a value (a date, a number, a phrase), not as an entity" if valued else "")
    raise EditError(f"not an entity of this memory: {name!r}{hint}. {UNCHANGED}")


def merged_into(memory: Memory, key: str) -> EntityNode | None:
    """The live node holding the rows of a merge that joined `key`, when `key` is no node itself."""
    if memory.entity(key) is not None:
        return None
    for r in reversed(memory.merges):
        if r.joined_key == key:
            holder = _holder(memory, r)
            if holder is not None:
                return holder
    return None


def _holder(memory: Memory, record: MergeRecord) -> EntityNode | None:
    """The node the rows of a merge belong to now."""
    for i in record.engrams:
        return memory.entity(memory.engrams[i].key)
    for i in record.heads:
        return memory.entity(memory.triples[i].head_key)
    for i in record.tails:
        return memory.entity(memory.triples[i].tail_key)
    return None


def find_passage(memory: Memory, text: str) -> int:
    """A passage (chunk id) from how a person names it: its number, the name of a document that is
    one passage, or DOCUMENT#N (the document's N-th passage, from 0)."""
    text = str(text).strip()
    if text.isdigit() and int(text) < len(memory.chunks):
        return int(text)
    doc, sep, idx = text.rpartition("#")
    if sep and idx.isdigit():
        hit = [c.chunk_id for c in memory.chunks if c.doc_id == doc and c.index == int(idx)]
        if hit:
            return hit[0]
    whole = [c.chunk_id for c in memory.chunks if c.doc_id == text]
    if len(whole) == 1:
        return whole[0]
    if whole:
        raise EditError(f"document {text!r} has {len(whole)} passages: name one as {text}#0 to {text}#{len(whole) - 1}, "
                        f"or by number. {UNCHANGED}")
    raise EditError(f"no passage {text!r}: name one by number (0 to {len(memory.chunks) - 1}), by the name of a "
                    f"one-passage document, or as DOCUMENT#N. {UNCHANGED}")


def find_triples(memory: Memory, head: str, relation: str, tail: str, passage: int | None = None) -> list[TripleRow]:
    """The triple instances that read HEAD RELATION TAIL (an end matches its node's key or its own
    text's, case and accents aside; relations compare case and spacing aside), in `passage` when given."""
    h, r, tl = entity_key(head), _relation_key(relation), entity_key(tail)
    return [t for t in memory.triples
            if _relation_key(t.relation) == r and h in (t.head_key, entity_key(t.head))
            and tl in (t.tail_key, entity_key(t.tail)) and (passage is None or t.chunk_id == passage)]


def _two(memory: Memory, a: str, b: str, verb: str) -> tuple[EntityNode, EntityNode]:
    first, second = find_entity(memory, a), find_entity(memory, b)
    if first.key == second.key:
        same = f"{a!r} and {b!r} name" if a != b else f"{a!r} names"
        raise EditError(f"{same} one entity ({first.name!r}): {verb} needs two different entities. {UNCHANGED}")
    return first, second


def _clean(text: str) -> str:
    return " ".join(str(text or "").split())


def _new_name(text: str, what: str) -> str:
    name = _clean(text)
    if not entity_key(name):
        raise EditError(f"{what} {text!r} has no letters or digits. {UNCHANGED}")
    if len(name) > MAX_NAME:
        raise EditError(f"{what} is {len(name)} characters; an entity name is at most {MAX_NAME}. {UNCHANGED}")
    return name


def _relation_key(relation: str) -> str:
    """Relations compare as the extraction's de-duplication compares them: case and spacing aside."""
    return " ".join(relation.lower().split())


def _known(memory: Memory) -> dict[str, tuple[str, np.ndarray]]:
    """Every node's name and vector now: what an edit may keep."""
    return {n.key: (n.name, memory.entity_vecs[i]) for i, n in enumerate(memory.entities)}


def _rows(vectors: np.ndarray, keep: list[int], dim: int) -> np.ndarray:
    return np.ascontiguousarray(vectors[keep], dtype=np.float32) if keep else np.zeros((0, dim), np.float32)


def _encode(embedder: Any, texts: list[str], dim: int) -> np.ndarray:
    return np.asarray(embedder.encode(texts), dtype=np.float32) if texts else np.zeros((0, dim), np.float32)


# ------------------------------------------------------------------ the edits
def merge(memory: Memory, entity: str, into: str, embedder: Any) -> tuple[Memory, EditDone]:
    """`entity` joins `into`: one node, under `into`'s key (see the module's docstring)."""
    a, b = _two(memory, entity, into, "a merge")
    m = memory.copy()
    engrams = [e.engram_id for e in m.engrams if e.key == a.key]
    heads = [t.triple_id for t in m.triples if t.head_key == a.key]
    tails = [t.triple_id for t in m.triples if t.tail_key == a.key]
    for i in engrams:
        m.engrams[i] = replace(m.engrams[i], key=b.key)
    for i in heads:
        m.triples[i] = replace(m.triples[i], head_key=b.key)
    for i in tails:
        m.triples[i] = replace(m.triples[i], tail_key=b.key)
    record = MergeRecord(max((r.merge_id for r in m.merges), default=0) + 1, a.key, a.name, engrams, heads, tails,
                         {a.key: a.name, b.key: b.name},
                         np.vstack([memory.entity_vector(a.key), memory.entity_vector(b.key)]).astype(np.float32))
    m.merges.append(record)
    embedded = embed_entities(m, embedder, _known(memory))
    node = m.entity(b.key)
    loops = sum(1 for t in m.triples if t.head_key == t.tail_key == b.key) - sum(
        1 for t in memory.triples if t.head_key == t.tail_key == b.key)
    notes = [f"{loops} triple(s) between the two now join {node.name!r} to itself"] if loops else []
    if node.name != b.name:
        notes.append(f"the merged entity is named {node.name!r}, its most frequent mention (rename it to choose)")
    return m, EditDone("merge", f"merged {a.name!r} into {b.name!r}: {len(engrams)} mention(s) and "
                                f"{len(heads) + len(tails)} triple end(s) moved", tuple(notes),
                       (a.key, b.key), tuple(sorted(set(heads + tails))), len(embedded))


def split(memory: Memory, entity: str, embedder: Any, joined: str = "") -> tuple[Memory, EditDone]:
    """Undo a merge into `entity`: the latest still on record, or the one that joined `joined`."""
    node = find_entity(memory, entity)
    records = [r for r in memory.merges if _holder(memory, r) is node]
    if not records:
        raise EditError(f"{node.name!r} is not the result of a merge on record: nothing to split. {UNCHANGED}")
    if joined:
        chosen = [r for r in records if r.joined_key == entity_key(joined)]
        if not chosen:
            raise EditError(f"no merge of {joined!r} into {node.name!r} is on record; merged into it: "
                            f"{', '.join(repr(r.joined_name) for r in records)}. {UNCHANGED}")
        record = chosen[-1]
    else:
        record = records[-1]
    m = memory.copy()
    for i in record.engrams:
        m.engrams[i] = replace(m.engrams[i], key=record.joined_key)
    for i in record.heads:
        m.triples[i] = replace(m.triples[i], head_key=record.joined_key)
    for i in record.tails:
        m.triples[i] = replace(m.triples[i], tail_key=record.joined_key)
    # later merges moved these rows on (out-of-order splits): they are not theirs to move back
    moved = (set(record.engrams), set(record.heads), set(record.tails))
    m.merges = []
    for r in memory.merges:
        if r.merge_id == record.merge_id:
            continue
        if r.merge_id > record.merge_id:
            r = replace(r, engrams=[i for i in r.engrams if i not in moved[0]],
                        heads=[i for i in r.heads if i not in moved[1]], tails=[i for i in r.tails if i not in moved[2]])
        if r.rows():
            m.merges.append(r)
    known = _known(memory)
    assert record.vectors is not None
    known.update({k: (name, record.vectors[i]) for i, (k, name) in enumerate(record.names.items())})
    embedded = embed_entities(m, embedder, known)
    back, rest = m.entity(record.joined_key), m.entity(node.key)
    return m, EditDone("split", f"split {back.name!r} out of {rest.name if rest else node.name!r}: "
                                f"{len(record.engrams)} mention(s) and "
                                f"{len(record.heads) + len(record.tails)} triple end(s) moved back", (),
                       (record.joined_key, node.key), tuple(sorted(set(record.heads + record.tails))),
                       len(embedded))


def unlink_coref(memory: Memory, entity: str, other: str) -> tuple[Memory, EditDone]:
    """Remove the coreference link between two nodes (both ways, every threshold)."""
    a, b = _two(memory, entity, other, "a coreference link")
    pair = (a.key, b.key) if a.key < b.key else (b.key, a.key)
    if pair in memory.coref_unlinked:
        raise EditError(f"the link between {a.name!r} and {b.name!r} is removed already. {UNCHANGED}")
    top, threshold = memory.params.get("coref_top", 5), memory.params.get("coref_threshold", 0.8)
    linked = any(c.key == b.key for c in memory.coref_of(a.key, top, threshold)) or any(
        c.key == a.key for c in memory.coref_of(b.key, top, threshold))
    cosine = float(memory.entity_vector(a.key) @ memory.entity_vector(b.key))
    m = memory.copy()
    m.coref_unlinked.add(pair)
    notes = () if linked else (
        f"they were not coreference candidates at this memory's top {top} and threshold {threshold} "
        f"(cosine {cosine:.3f}); the link is now removed at any threshold a query uses",)
    return m, EditDone("unlink-coref", f"removed the coreference link between {a.name!r} and {b.name!r} "
                                       f"(cosine {cosine:.3f})", notes, (a.key, b.key))


def rename(memory: Memory, entity: str, name: str, embedder: Any) -> tuple[Memory, EditDone]:
    """Every mention of `entity` is named `name`, and triples naming it say so."""
    node = find_entity(memory, entity)
    name = _new_name(name, "the new name")
    key = entity_key(name)
    if all(memory.engrams[i].name == name for i in node.engram_ids) and key == node.key:
        raise EditError(f"{node.name!r} is named {name!r} already. {UNCHANGED}")
    if key != node.key:
        other = memory.entity(key)
        if other is not None:
            raise EditError(f"{name!r} names the entity {other.name!r} already: merge {node.name!r} into it "
                            f"instead (edit merge). {UNCHANGED}")
        holder = merged_into(memory, key)
        if holder is not None:
            raise EditError(f"{name!r} was merged into {holder.name!r}; a split would bring it back under that "
                            f"name: choose another name, or split {holder.name!r} first. {UNCHANGED}")
    if not is_entity_name(name):
        raise EditError(f"{name!r} reads as a phrase, not a name (memrag keeps entity names short). {UNCHANGED}")
    m = memory.copy()
    engrams = list(node.engram_ids)
    for i in engrams:
        m.engrams[i] = replace(m.engrams[i], key=key, name=name)
    triples = []
    for t in memory.triples:
        head, tail = t.head_key == node.key, t.tail_key == node.key
        if head or tail:
            m.triples[t.triple_id] = replace(t, head_key=key if head else t.head_key, head=name if head else t.head,
                                             tail_key=key if tail else t.tail_key, tail=name if tail else t.tail)
            triples.append(t.triple_id)
    m.coref_unlinked = {tuple(sorted((key if x == node.key else x) for x in pair)) for pair in m.coref_unlinked}
    m.engram_vecs = m.engram_vecs.copy()
    m.engram_vecs[engrams] = _encode(embedder, [engram_text(m.engrams[i]) for i in engrams], m.dim)
    m.triple_vecs = m.triple_vecs.copy()
    if triples:
        m.triple_vecs[triples] = _encode(embedder, [m.triples[i].text for i in triples], m.dim)
    embedded = embed_entities(m, embedder, _known(memory))
    return m, EditDone("rename", f"renamed {node.name!r} to {name!r}: {len(engrams)} mention(s) and "
                                 f"{len(triples)} triple(s)", (), (node.key, key), tuple(triples),
                       len(engrams) + len(triples) + len(embedded))


def remove_triple(memory: Memory, triple: int) -> tuple[Memory, EditDone]:
    """Remove one triple instance by its id; the triples after it move up one id."""
    t = _triple(memory, triple)
    m = memory.copy()
    kept = [x for x in memory.triples if x.triple_id != t.triple_id]
    m.triples = [replace(x, triple_id=i) for i, x in enumerate(kept)]
    m.triple_vecs = _rows(memory.triple_vecs, [x.triple_id for x in kept], m.dim)
    triple_ids = {x.triple_id: i for i, x in enumerate(kept)}
    engram_ids = {e.engram_id: e.engram_id for e in m.engrams}
    m.merges = [r for r in (r.renumbered(engram_ids, triple_ids) for r in m.merges) if r is not None]
    m.rebuild_derived()
    return m, EditDone("remove-triple", f"removed triple {t.triple_id} ({t.head} → {t.relation} → {t.tail}) of "
                                        f"passage {t.chunk_id}", (), (t.head_key, t.tail_key))


def _triple(memory: Memory, triple: int) -> TripleRow:
    if isinstance(triple, bool) or not isinstance(triple, int) or not 0 <= triple < len(memory.triples):
        raise EditError(f"no triple {triple!r}: this memory's triples are numbered 0 to {len(memory.triples) - 1}. "
                        f"{UNCHANGED}")
    return memory.triples[triple]


def add_triple(memory: Memory, head: str, relation: str, tail: str, passage: int,
               embedder: Any) -> tuple[Memory, EditDone]:
    """A triple of passage `passage` (a chunk id); ends the passage does not mention yet get a mention."""
    if isinstance(passage, bool) or not isinstance(passage, int) or not 0 <= passage < len(memory.chunks):
        raise EditError(f"no passage {passage!r}: this memory's passages are numbered 0 to {len(memory.chunks) - 1}. "
                        f"{UNCHANGED}")
    ends = [_new_name(head, "the head"), _new_name(tail, "the tail")]
    relation = _clean(relation)
    if not relation or len(relation) > MAX_RELATION:
        raise EditError(f"the relation must be 1 to {MAX_RELATION} characters. {UNCHANGED}")
    keys = [entity_key(x) for x in ends]
    if keys[0] == keys[1]:
        raise EditError(f"a triple joins two different entities; {ends[0]!r} and {ends[1]!r} are one. {UNCHANGED}")
    for given, key in zip(ends, keys):
        holder = merged_into(memory, key)
        if holder is not None:
            raise EditError(f"{given!r} was merged into {holder.name!r}: name that entity. {UNCHANGED}")
    nodes = [memory.entity(k) for k in keys]
    surface = [n.name if n is not None else x for n, x in zip(nodes, ends)]
    fact = (keys[0], _relation_key(relation), keys[1])
    for t in memory.triples:
        if t.chunk_id == passage and (t.head_key, _relation_key(t.relation), t.tail_key) == fact:
            raise EditError(f"passage {passage} holds this triple already (triple {t.triple_id}). {UNCHANGED}")
    m = memory.copy()
    new_engrams = []
    for name, key, node in zip(surface, keys, nodes):
        mentioned = any(memory.engrams[i].chunk_id == passage for i in (node.engram_ids if node else []))
        if not mentioned and (node is not None or is_entity_name(name)):
            new_engrams.append(EngramRow(len(m.engrams), key, name, node.type if node else value_type(name), "", 1,
                                         passage))
            m.engrams.append(new_engrams[-1])
    tid = len(m.triples)
    m.triples.append(TripleRow(tid, keys[0], surface[0], relation, keys[1], surface[1], passage))
    m.engram_vecs = np.vstack([memory.engram_vecs, _encode(embedder, [engram_text(e) for e in new_engrams], m.dim)])
    m.triple_vecs = np.vstack([memory.triple_vecs, _encode(embedder, [m.triples[tid].text], m.dim)])
    embedded = embed_entities(m, embedder, _known(memory))
    text = memory.chunks[passage].text.lower()
    absent = [n for n in surface if n.lower() not in text]
    notes = tuple(f"{n!r} does not appear in passage {passage}'s text as written" for n in absent)
    return m, EditDone("add-triple", f"added triple {tid} ({surface[0]} → {relation} → {surface[1]}) to passage "
                                     f"{passage}" + (f", with {len(new_engrams)} new mention(s)" if new_engrams else ""),
                       notes, tuple(keys), (tid,), 1 + len(new_engrams) + len(embedded))


# ------------------------------------------------------------------ one entry point
def apply(memory: Memory, edit: Edit, embedder: Any) -> tuple[Memory, EditDone]:
    """The edited copy of `memory` and what the edit did; EditError when it cannot be made."""
    edited, done = _dispatch(memory, edit, embedder)
    # the coreference sets a save writes: only those the edit can have changed are searched again
    edited.carry_coref_sets(memory, memory.params.get("coref_top", 5), memory.params.get("coref_threshold", 0.8))
    return edited, done


def _dispatch(memory: Memory, edit: Edit, embedder: Any) -> tuple[Memory, EditDone]:
    a = edit.args
    try:
        if edit.kind == "merge":
            return merge(memory, a["entity"], a["into"], embedder)
        if edit.kind == "split":
            return split(memory, a["entity"], embedder, a.get("joined", ""))
        if edit.kind == "unlink-coref":
            return unlink_coref(memory, a["entity"], a["other"])
        if edit.kind == "rename":
            return rename(memory, a["entity"], a["name"], embedder)
        if edit.kind == "remove-triple":
            return remove_triple(memory, a["triple"])
        if edit.kind == "add-triple":
            return add_triple(memory, a["head"], a["relation"], a["tail"], a["passage"], embedder)
    except KeyError as e:
        raise EditError(f"the {edit.kind} edit needs {e.args[0]!r}. {UNCHANGED}") from None
    raise EditError(f"{edit.kind!r} is not an edit; the edits are {', '.join(KINDS)}. {UNCHANGED}")


def edit_memory(path: Path, edit: Edit, embedder: Callable[[str], Any],
                lock_wait_s: float = store.LOCK_WAIT_S, opened: Memory | None = None) -> EditDone:
    """Make `edit` on the memory folder at `path` as a new version (logged; undo goes back).
    `embedder(model_id)` (the memory's own) is opened only when something must be embedded.
    `opened`, a Memory the caller holds open from this folder (the app's), lends its computed
    coreference sets when it matches what is on disk (checked), which spares a large memory the
    seconds of computing them all again. The shipped sample memory is refused (edits go to a copy);
    the writer lock is held from loading to saving."""
    from memrag.sample import sample_refusal

    path = Path(path)
    refusal = sample_refusal(path, SAMPLE_REMEDY)
    if refusal:
        raise EditError(refusal)
    with store.writing(path, lock_wait_s):
        memory = store.load(path)
        if opened is not None:
            memory.adopt_coref_sets(opened)
        edited, done = apply(memory, edit, LazyEmbedder(lambda: embedder(memory.embedder_id)))
        version = store.save(edited, path, change=done.text, kind=edit.kind, args=dict(edit.args))
    return replace(done, version=version.name, memory=edited)
