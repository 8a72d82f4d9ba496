"""python -m memrag edit --memory DIR merge|split|unlink-coref|rename|remove-triple|add-triple|show|log ...
and `index --memory DIR --versions | --use VERSION` (the version list and switch).

Every edit is a new version of the memory (`edit --memory DIR log` lists them; `index --undo` goes
back one, `index --use VERSION` to any kept one). Entities are named as the Memory page shows them
(case, accents and punctuation do not matter); triples by the id `show` prints, or by their words;
passages by number, by the name of a one-passage document, or as DOCUMENT#N.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

VERBS: dict[str, str] = {
    "merge": "merge ENTITY into INTO (accept a coreference candidate, or any two entities)",
    "split": "undo a merge: the merged ENTITY splits back into the entities it joined",
    "unlink-coref": "remove the coreference link between ENTITY and OTHER",
    "rename": "rename ENTITY to NAME (every mention and triple naming it)",
    "remove-triple": "remove a triple: its ID (as `show` lists it), or HEAD RELATION TAIL [--passage P]",
    "add-triple": "add HEAD RELATION TAIL as a triple of passage P (--passage)",
    "show": "print an entity's mentions, triples (with ids), coreference candidates and merges",
    "log": "print the memory's edit log (what, when, which version; which versions are kept)",
}


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("edit", help="edit a memory's entities and triples (each edit a new version, with undo)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memory", required=True, type=Path, help="the memory folder")
    p.add_argument("--json", action="store_true", help="last stdout line: one JSON object")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="one JSON object last")
    v = {name: verbs.add_parser(name, help=text, parents=[common]) for name, text in VERBS.items()}
    v["merge"].add_argument("entity")
    v["merge"].add_argument("into")
    v["split"].add_argument("entity")
    v["split"].add_argument("--joined", default="", help="which merge to undo (default: the latest into ENTITY)")
    v["unlink-coref"].add_argument("entity")
    v["unlink-coref"].add_argument("other")
    v["rename"].add_argument("entity")
    v["rename"].add_argument("name")
    v["remove-triple"].add_argument("triple", nargs="+", metavar="ID | HEAD RELATION TAIL")
    v["remove-triple"].add_argument("--passage", help="the passage the triple is in (when its words are not enough)")
    for word in ("head", "relation", "tail"):
        v["add-triple"].add_argument(word)
    v["add-triple"].add_argument("--passage", required=True, help="number, one-passage document name, or DOC#N")
    v["show"].add_argument("entity")
    return {"edit": cmd_edit}


def cmd_edit(args: argparse.Namespace) -> int:
    from memrag.index import edits, store

    try:
        if not store.is_memory_dir(args.memory):
            raise store.MemoryStoreError(f"{args.memory} is not a memrag memory folder (it has no CURRENT file)")
        if args.verb == "log":
            return _log(args.memory, args.json)
        if args.verb == "show":
            return _show(store.load(args.memory), args.entity, args.json)
        edit = _edit_from(args, store.load(args.memory))
        done = edits.edit_memory(args.memory, edit, _embedder)
    except ValueError as e:  # EditError, MemoryStoreError and their kinds: the message says what and why
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{done.text}; new version {done.version} (undo with `python -m memrag index --memory "
          f"{args.memory} --undo`)")
    for note in done.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({"edit": edit.kind, "args": edit.args, "version": done.version, "text": done.text,
                          "notes": list(done.notes), "embedded": done.embedded}))
    return 0


def _embedder(model_id: str) -> Any:
    from memrag.embed import get_embedder

    return get_embedder(model_id)


def _edit_from(args: argparse.Namespace, memory: Any) -> Any:
    """The Edit the command line asks for; names that need the memory (passages, triples by their
    words) are resolved here, so the log holds ids."""
    from memrag.index import edits

    kind = args.verb
    if kind == "merge":
        return edits.Edit(kind, {"entity": args.entity, "into": args.into})
    if kind == "split":
        return edits.Edit(kind, {"entity": args.entity, **({"joined": args.joined} if args.joined else {})})
    if kind == "unlink-coref":
        return edits.Edit(kind, {"entity": args.entity, "other": args.other})
    if kind == "rename":
        return edits.Edit(kind, {"entity": args.entity, "name": args.name})
    if kind == "add-triple":
        return edits.Edit(kind, {"head": args.head, "relation": args.relation, "tail": args.tail,
                                 "passage": edits.find_passage(memory, args.passage)})
    return edits.Edit(kind, {"triple": _triple_id(memory, args.triple, args.passage)})


def _triple_id(memory: Any, words: list[str], passage: str | None) -> int:
    from memrag.index import edits

    if len(words) == 1 and words[0].isdigit() and passage is None:
        return int(words[0])
    if len(words) != 3:
        raise edits.EditError(f"remove-triple takes a triple's id, or its HEAD RELATION TAIL (three words, quoted "
                              f"when they hold spaces); got {len(words)}. {edits.UNCHANGED}")
    chunk = edits.find_passage(memory, passage) if passage is not None else None
    found = edits.find_triples(memory, *words, passage=chunk)
    where = f" in passage {chunk}" if chunk is not None else ""
    if not found:
        raise edits.EditError(f"no triple reads {' → '.join(words)}{where}: `edit --memory DIR show ENTITY` lists an "
                              f"entity's triples with their ids. {edits.UNCHANGED}")
    if len(found) > 1:
        listed = ", ".join(f"{t.triple_id} (passage {t.chunk_id})" for t in found)
        raise edits.EditError(f"{len(found)} triples read {' → '.join(words)}{where}: {listed}; give one id, or "
                              f"--passage. {edits.UNCHANGED}")
    return found[0].triple_id


def _show(memory: Any, name: str, as_json: bool) -> int:
    from memrag.index import edits

    node = edits.find_entity(memory, name)
    top, threshold = memory.params.get("coref_top", 5), memory.params.get("coref_threshold", 0.8)
    mentions = [memory.engrams[i] for i in node.engram_ids]
    triples = [memory.triples[i] for i in memory.triples_of.get(node.key, [])]
    coref = memory.coref_of(node.key, top, threshold)
    merged = [r.joined_name for r in memory.merges if edits.merged_into(memory, r.joined_key) is node]
    print(f"{node.name} ({node.type}); key {node.key!r}; {len(mentions)} mention(s) in passage(s) "
          f"{', '.join(map(str, node.chunk_ids))}")
    for e in mentions:
        print(f"  mention in passage {e.chunk_id}: {e.name}" + (f": {e.description}" if e.description else ""))
    for t in triples:
        print(f"  triple {t.triple_id} (passage {t.chunk_id}): {t.head} → {t.relation} → {t.tail}")
    for c in coref:
        print(f"  coreference candidate: {c.name} ({c.similarity:.3f})")
    for joined in merged:
        print(f"  merged into it: {joined} (`edit split {node.name!r}` undoes the latest)")
    if as_json:
        print(json.dumps({"key": node.key, "name": node.name, "type": node.type, "passages": node.chunk_ids,
                          "triples": [t.triple_id for t in triples], "coref": [c.key for c in coref],
                          "merged": merged}, ensure_ascii=False))
    return 0


def _log(memory: Path, as_json: bool) -> int:
    from memrag.index import versions

    rows = versions.history(memory)
    for r in rows:
        print(r.line())
    if not rows:
        print("no change is logged for this memory (it was saved before edit logs, or never changed)")
    if as_json:
        print(json.dumps({"log": [r.as_json() for r in rows]}, ensure_ascii=False))
    return 0


def versions_command(memory: Path, use: str | None, as_json: bool) -> int:
    """List the versions kept (`use` None) or make one live; errors are raised for the caller to print."""
    from memrag.index import versions

    if use is not None:
        live, before = versions.use_version(memory, use)
        if live == before:
            print(f"version {live} is already the live one; nothing was changed")
        else:
            back = (f"; {before} stays on disk until a later save prunes it (`--use {before}` switches back)"
                    if before else "")
            print(f"version {live} is live now (it was opened whole first){back}")
        if as_json:
            print(json.dumps({"version": live, "before": before}))
        return 0
    listed = versions.list_versions(memory)
    for v in listed:
        print(v.line())
    print(f"{len(listed)} version(s) kept; * marks the live one. `--use VERSION` makes another live.")
    if as_json:
        print(json.dumps({"versions": [v.as_json() for v in listed]}))
    return 0
