"""Seconds per memory edit (python -m memrag edit / the app's edit actions) on a large memory.

Two copies of the memory, edited alike, interleaved: one as the command line edits (the folder
alone: every coreference set is computed again when the new version is saved), one as the app
edits (it lends the Memory it holds open, so only the sets the edit can change are searched
again). Each edit's seconds: load + edit + save, under the writer lock.

    python bench/edit_bench.py --memory /tmp/mb/memory     # a memory index_bench.py --work left
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from memrag.embed import get_embedder
from memrag.index import copies, edits, store


def pick_edits(memory, quick: bool) -> list[edits.Edit]:
    """A merge of a coreference pair and its split, an unlink, a rename, a triple removed and added."""
    sets = memory.coref_sets(memory.params.get("coref_top", 5), memory.params.get("coref_threshold", 0.8))
    a = next(k for k, v in sets.items() if v)
    b = sets[a][0].key
    c = next(k for k, v in sets.items() if v and k not in (a, b) and v[0].key not in (a, b))
    t = memory.triples[0]
    chosen = [edits.Edit("merge", {"entity": a, "into": b}), edits.Edit("split", {"entity": b}),
              edits.Edit("unlink-coref", {"entity": c, "other": sets[c][0].key}),
              edits.Edit("rename", {"entity": c, "name": memory.entity(c).name + " (renamed)"}),
              edits.Edit("remove-triple", {"triple": 0}),
              edits.Edit("add-triple", {"head": t.head, "relation": t.relation + " again", "tail": t.tail,
                                        "passage": t.chunk_id})]
    return chosen[:2] if quick else chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", type=Path, required=True, help="a memory folder (copied, never changed)")
    ap.add_argument("--quick", action="store_true", help="two edits only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cli_copy, app_copy = (copies.copy_memory(args.memory, Path(tmp) / name) for name in ("cli", "app"))
        t0 = time.perf_counter()
        opened = store.load(app_copy)
        todo = pick_edits(opened, args.quick)  # computes the sets, as the app's Memory page does
        open_s = time.perf_counter() - t0
        get_embedder(opened.embedder_id).encode(["warm up"])  # the model load is not an edit's
        rows = []
        for edit in todo:
            t = time.perf_counter()
            edits.edit_memory(cli_copy, edit, get_embedder)
            cli_s = time.perf_counter() - t
            t = time.perf_counter()
            done = edits.edit_memory(app_copy, edit, get_embedder, opened=opened)
            app_s = time.perf_counter() - t
            opened = done.memory
            rows.append({"edit": edit.kind, "cli_s": round(cli_s, 2), "app_s": round(app_s, 2),
                         "text": done.text[:70]})
        same = store.memory_to_rows(store.load(cli_copy)) == store.memory_to_rows(store.load(app_copy))
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"memory": str(args.memory), "entities": len(opened.entities), "open_and_sets_s": round(open_s, 2),
           "edits": rows, "same_content": same}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.memory}: {out['entities']} entities; opened with its coreference sets in {out['open_and_sets_s']} s")
    print(f"{'edit':<14}{'CLI s':>8}{'app s':>8}  what")
    for r in rows:
        print(f"{r['edit']:<14}{r['cli_s']:>8}{r['app_s']:>8}  {r['text']}")
    print(f"both copies hold the same content afterwards: {same}")


if __name__ == "__main__":
    main()
