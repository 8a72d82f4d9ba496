"""The recorded showcase of "fix the memory, ask again": one edit on a copy of the sample memory that
turns a miss into a hit for some method, recorded so it replays offline.

`sample_corpus/showcase/` holds three files:
- `showcase.json`: the question (a sample question id), the edit (as `python -m memrag edit` and the
  log hold it), and why this edit (what is wrong in the memory);
- `responses.jsonl`: the replies of the calls the edit changed, recorded live once (`--record`); every
  other call of asking again is answered from the previous trace, which replays from the sample's own
  recordings — so asking again needs no model;
- `expected.json`: what asking again showed when it was recorded (per method: the answer and each gold
  passage's rank and fate, before → after), which a replay must reproduce.

    python -m memrag.explain.showcase            # replay offline and compare with expected.json
    python -m memrag.explain.showcase --record   # live: records the changed calls, then expected.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from memrag import demo
from memrag.ask import ask
from memrag.durable import write_atomic
from memrag.eval.gold import doc_unit
from memrag.explain import ask_again
from memrag.explain.trace_diff import MethodDiff, diff_traces
from memrag.filesafe import read_bytes
from memrag.index import copies, edits, store
from memrag.index.edits import Edit
from memrag.index.memory import Memory
from memrag.llm.base import LLM
from memrag.llm.recordings import RecordingLLM, Recordings
from memrag.trace import Trace

SHOWCASE_DIR = demo.ROOT / "sample_corpus" / "showcase"
SPEC, RESPONSES, EXPECTED = "showcase.json", "responses.jsonl", "expected.json"
K = 5  # "top k", as the Ask page's gold line and the diff count it
_MAX_SPEC_BYTES = 1_000_000


@dataclass(frozen=True)
class Showcase:
    qid: str
    edit: Edit
    title: str  # the edit in a few words, for the guide
    why: str  # what is wrong in the memory, and what the edit is expected to change
    folder: Path

    @property
    def record(self) -> dict[str, Any]:
        """The sample question the showcase asks (with its gold)."""
        found = [q for q in demo.sample_questions() if q.get("id") == self.qid]
        if not found:
            raise ValueError(f"{self.folder / SPEC}: the sample has no question {self.qid!r}")
        return found[0]


def _read_json(path: Path) -> Any:
    return json.loads(read_bytes(path, _MAX_SPEC_BYTES, what="showcase file").decode("utf-8"))


def _folder(folder: Path | None) -> Path:
    return Path(folder) if folder is not None else SHOWCASE_DIR  # read when called: tests point it elsewhere


def load(folder: Path | None = None) -> Showcase:
    """The showcase described in `folder`/showcase.json (the shipped one by default)."""
    folder = _folder(folder)
    spec = _read_json(folder / SPEC)
    edit = spec.get("edit") or {}
    return Showcase(str(spec["question"]), Edit(str(edit["kind"]), dict(edit.get("args") or {})),
                    str(spec.get("title", "")), str(spec.get("why", "")), Path(folder))


def available(folder: Path | None = None) -> bool:
    """Whether this checkout ships a recorded showcase (all three files)."""
    return all((_folder(folder) / f).is_file() for f in (SPEC, RESPONSES, EXPECTED))


def with_showcase(rec: Recordings, folder: Path | None = None) -> Recordings:
    """`rec` (a copy of the sample's recordings) with the showcase's replies added, so a replay answers
    the calls the showcase's edit changed too. Refused when another engine made them (their keys
    could never match)."""
    extra = Recordings.load(_folder(folder) / RESPONSES)
    if extra.identity != rec.identity:
        raise ValueError(f"{extra.path} was recorded by {extra.backend} / {extra.model}, the memory's recordings "
                         f"by {rec.backend} / {rec.model}: the showcase cannot answer from them")
    return Recordings(rec.path, rec.identity, rec.questions, {**extra.responses, **rec.responses},
                      rec.memory_fingerprint, {**extra.broken, **rec.broken}, [*rec.unreadable, *extra.unreadable])


def expected(folder: Path | None = None) -> dict[str, Any]:
    """What asking again showed when the showcase was recorded (expected.json)."""
    return _read_json(_folder(folder) / EXPECTED)


def expected_lines(folder: Path | None = None) -> list[str]:
    """The recorded outcome in words, one line per method it changed (for the demo guide)."""
    from memrag.methods.registry import label_of

    def rank(r: int | None) -> str:
        return f"rank {r}" if r is not None else "unranked"

    out = []
    for method, o in expected(folder).items():
        parts = [f"answer {o['answer'][0]!r} → {o['answer'][1]!r}"] if o["answer"][0] != o["answer"][1] else []
        parts += [f"gold '{g['title']}' {rank(g['rank'][0])} → {rank(g['rank'][1])}"
                  + (f" ({g['fate'][0]} → {g['fate'][1]})" if g["fate"][0] != g["fate"][1] else "")
                  for g in o["gold"]]
        if parts:
            out.append(f"{label_of(method)}: " + "; ".join(parts))
    return out


# ------------------------------------------------------------------ the run: before, the edit, again
@dataclass
class Run:
    before: list[Trace]
    after: list[Trace]
    diffs: list[MethodDiff]
    asked: dict[str, int]  # method → calls that did not come from the previous trace


def diffs_of(memory: Memory, record: dict[str, Any], before: list[Trace], after: list[Trace]) -> list[MethodDiff]:
    """Per method, what changed between `before` and `after` for `record`'s gold passages."""
    gold = demo.gold_chunk_ids(memory, record.get("gold_docs", []))
    return diff_traces(before, after, gold, K, doc_unit(after[0], memory))


def run(show: Showcase, copy_dir: Path, embedder: Any, changed_calls: Callable[[Recordings], LLM]) -> Run:
    """On the copy of the sample at `copy_dir`: the question replayed, the edit made, the question asked
    again (unchanged calls from the first traces, changed ones by `changed_calls(the copy's recordings)`)."""
    rec = Recordings.open(copy_dir)
    if rec is None:
        raise ValueError(f"{copy_dir} holds no recordings: it is not a copy of the sample")
    question = show.record["question"]
    before = ask(store.load(copy_dir, embedder.model_id), question, llm=rec.replay_llm(), embedder=embedder)
    edits.edit_memory(copy_dir, show.edit, lambda model: embedder)
    memory = store.load(copy_dir, embedder.model_id)
    again = ask_again.ask_again(memory, before, llm=changed_calls(rec), embedder=embedder)
    return Run(before, again.traces, diffs_of(memory, show.record, before, again.traces), dict(again.asked))


def outcome(r: Run) -> dict[str, Any]:
    """What expected.json holds: per method, the answer and the changed gold passages before → after."""
    return {d.method: {"answer": [d.answer_before, d.answer_after], "asked": r.asked.get(d.method, 0),
                       "gold": [{"title": g.title, "rank": [g.rank_before, g.rank_after],
                                 "fate": [g.fate_before, g.fate_after]} for g in d.gold if g.changed]}
            for d in r.diffs}


def replay(show: Showcase, embedder: Any, workdir: Path) -> Run:
    """The showcase offline, on a fresh copy of the sample under `workdir`."""
    copy = copies.copy_memory(demo.sample_memory_dir(), Path(workdir) / "showcase-copy")
    return run(show, copy, embedder, lambda rec: with_showcase(rec, show.folder).replay_llm())


def record(show: Showcase, live: LLM, embedder: Any, workdir: Path) -> Run:
    """The showcase with `live` answering the changed calls; their replies and the outcome written."""
    copy = copies.copy_memory(demo.sample_memory_dir(), Path(workdir) / "showcase-copy")
    kept: list[RecordingLLM] = []

    def recorder(rec: Recordings) -> LLM:
        if rec.identity != live.identity():
            raise ValueError(f"the sample was recorded by {rec.backend} / {rec.model}, not {live.backend} / "
                             f"{live.model}: record the showcase with the sample's engine")
        kept.append(RecordingLLM(live))
        kept[0].question = show.record["question"]  # each reply says which question it answered
        return kept[0]

    r = run(show, copy, embedder, recorder)
    kept[0].write(show.folder, [show.record["question"]], RESPONSES, r.after[0].memory_fingerprint)
    write_atomic(show.folder / EXPECTED, json.dumps(outcome(r), indent=1, ensure_ascii=False) + "\n")
    return r


def report(r: Run) -> str:
    return "\n".join(line for d in r.diffs for line in d.lines())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memrag.explain.showcase", description=__doc__.split("\n")[0])
    p.add_argument("--record", action="store_true", help="ask the embedded model the calls the edit changed "
                   "(live) and write responses.jsonl and expected.json")
    args = p.parse_args(argv)
    from memrag.embed import get_embedder

    show, embedder = load(), get_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        if args.record:
            from memrag.config import Settings
            from memrag.llm.factory import make_llm

            live, choice = make_llm(Settings(backend="embedded", response_cache=False))
            print(choice.describe(), file=sys.stderr)
            r = record(show, live, embedder, Path(tmp))
            print(report(r))
            print(f"asked: {r.asked}; wrote {show.folder / RESPONSES} and {show.folder / EXPECTED}")
            return 0
        r = replay(show, embedder, Path(tmp))
    print(report(r))
    same = outcome(r) == _read_json(show.folder / EXPECTED)
    print("the replay matches expected.json" if same else "the replay DIFFERS from expected.json")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
