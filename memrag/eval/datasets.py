"""Benchmark loaders: questions, gold recall units and the pooled passage corpus.

Each dataset marks its gold passages differently, and each needs its own notion of
"the same passage" when scoring (the *recall unit*). `unit_of` is the single place that
knows that rule; every loader and every scorer goes through it.

Pooled corpus: the union of every question's passages, deduplicated by (title, text)
after the EcphoryRAG title prefixes are stripped. Source ids that collapse onto an earlier
passage are kept in `Dataset.aliases` (source id -> pooled pid).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from memrag import jsonsafe
from memrag.filesafe import UnreadableFile, open_regular, read_bytes

DATASET_NAMES = ("musique", "hipporag", "2wiki", "hotpotqa", "sample")
SCOPES = ("pooled", "limit-pooled", "per-question")


@dataclass(frozen=True)
class Passage:
    pid: str
    title: str
    text: str
    unit: str


@dataclass
class Question:
    qid: str
    question: str
    answers: list[str]
    gold_units: list[str]
    passage_ids: list[str]
    meta: dict = field(default_factory=dict)


@dataclass
class Dataset:
    name: str
    questions: list[Question]
    passages: dict[str, Passage]
    # Source id (dataset chunk id, corpus index) -> pid of the pooled passage it became.
    aliases: dict[str, str] = field(default_factory=dict)


def unit_of(ds_name: str, title: str, text: str, pid: str | None = None) -> str:
    """The key under which a passage counts for recall in dataset `ds_name`."""
    if ds_name in ("musique", "hipporag"):
        # MuSiQue titles repeat with different paragraphs: the pair is the identity.
        return json.dumps([title, text])
    if ds_name == "2wiki":
        # Gold is defined by supporting-fact titles, so any chunk of that title counts.
        return title
    if ds_name == "hotpotqa":
        # Several chunk ids carry the same passage; the text identifies it.
        return text
    if ds_name == "sample":
        if pid is None:
            raise ValueError("the sample corpus counts recall by document id: pass pid")
        return pid
    raise ValueError(f"unknown dataset {ds_name!r}; expected one of {', '.join(DATASET_NAMES)}")


def strip_title_prefix(title: str, chunk: str) -> str:
    """Remove the `Title: <t>\\n` or `<t>: ` heading EcphoryRAG put in front of chunk text."""
    for prefix in (f"Title: {title}\n", f"{title}: "):
        if chunk.startswith(prefix):
            return chunk[len(prefix) :]
    return chunk


class _PooledCorpus:
    """Collects passages, deduplicated by (title, text), and records id aliases."""

    def __init__(self, ds_name: str) -> None:
        self.ds_name = ds_name
        self.passages: dict[str, Passage] = {}
        self.aliases: dict[str, str] = {}
        self._pid_by_key: dict[tuple[str, str], str] = {}

    def add(self, title: str, text: str, pid: str, source_id: str | None = None) -> str:
        """Add a passage (or find its twin) and return the pooled pid."""
        key = (title, text)
        pooled = self._pid_by_key.get(key)
        if pooled is None:
            if pid in self.passages:
                raise ValueError(
                    f"{self.ds_name}: passage id {pid!r} is used for two different passages"
                )
            pooled = pid
            self._pid_by_key[key] = pid
            unit = unit_of(self.ds_name, title, text, pid)
            self.passages[pid] = Passage(pid=pid, title=title, text=text, unit=unit)
        if source_id is not None and source_id != pooled:
            self.aliases[source_id] = pooled
        return pooled

    def find(self, title: str, text: str) -> str | None:
        return self._pid_by_key.get((title, text))


# --------------------------------------------------------------------------- file reading


# The largest benchmark file memrag reads (2WikiMultihopQA's dev set is a few hundred MB).
BENCHMARK_MAX_BYTES = 2_000_000_000


def _read_json(path: str | Path) -> Any:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file not found: {path}")
    try:
        return jsonsafe.loads(read_bytes(path, BENCHMARK_MAX_BYTES, what="benchmark file"))
    except UnreadableFile:
        raise
    except ValueError as exc:  # bad JSON or nested too deep
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc


def _read_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """Records with their 1-based line numbers, so errors can point at the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file not found: {path}")
    records = []
    with os.fdopen(open_regular(path), encoding="utf-8") as fh:  # never a pipe or a device
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = jsonsafe.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc})") from exc
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{lineno}: expected a JSON object")
            records.append((lineno, record))
    return records


def _need(record: dict, key: str, where: str) -> Any:
    if key not in record:
        raise ValueError(f"{where}: missing field {key!r}")
    return record[key]


def _answers(answer: Any, aliases: Iterable[Any] | None) -> list[str]:
    """Answer first, then aliases, without repeats."""
    out: list[str] = []
    for a in [answer, *(aliases or [])]:
        a = str(a)
        if a not in out:
            out.append(a)
    return out


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _check_unique_qids(questions: list[Question], source: Path) -> None:
    seen: set[str] = set()
    for q in questions:
        if q.qid in seen:
            raise ValueError(f"{source}: question id {q.qid!r} appears twice")
        seen.add(q.qid)


# --------------------------------------------------------------------------- loaders


def load_musique(
    questions_path: str | Path, corpus_path: str | Path | None = None, name: str = "musique"
) -> Dataset:
    """HippoRAG-format questions (`paragraphs` with `is_supporting`).

    With `corpus_path` the pooled corpus is that file, pids `c<index>` (index-aligned with the
    OpenIE file), and each paragraph must be found there by (title, text). Without it the
    pooled corpus is built from the paragraphs, pids `p<index>`.
    """
    questions_path = Path(questions_path)
    raw = _read_json(questions_path)
    if not isinstance(raw, list):
        raise ValueError(f"{questions_path}: expected a JSON list of questions")

    corpus = _PooledCorpus(name)
    if corpus_path is not None:
        entries = _read_json(corpus_path)
        if not isinstance(entries, list):
            raise ValueError(f"{corpus_path}: expected a JSON list of {{title, text}}")
        for i, entry in enumerate(entries):
            where = f"{corpus_path} entry {i}"
            pid = f"c{i}"
            corpus.add(_need(entry, "title", where), _need(entry, "text", where), pid, source_id=pid)

    questions = []
    for n, rec in enumerate(raw):
        qid = str(_need(rec, "id", f"{questions_path} question #{n}"))
        where = f"{questions_path} question {qid}"
        passage_ids, gold = [], []
        for para in _need(rec, "paragraphs", where):
            title = _need(para, "title", where)
            # HippoRAG 1 writes `paragraph_text`, HippoRAG 2 writes `text`.
            text = para["paragraph_text"] if "paragraph_text" in para else _need(para, "text", where)
            if corpus_path is not None:
                pid = corpus.find(title, text)
                if pid is None:
                    raise ValueError(
                        f"{where}: paragraph {title!r} is not in the corpus file {corpus_path}"
                    )
            else:
                pid = corpus.add(title, text, f"p{len(corpus.passages)}")
            passage_ids.append(pid)
            if para.get("is_supporting"):
                gold.append(unit_of(name, title, text))
        decomposition = rec.get("question_decomposition", [])
        meta: dict[str, Any] = {"hops": _musique_hops(qid, decomposition), "decomposition": decomposition}
        if "answerable" in rec:
            meta["answerable"] = rec["answerable"]
        questions.append(
            Question(
                qid=qid,
                question=_need(rec, "question", where),
                answers=_answers(_need(rec, "answer", where), rec.get("answer_aliases")),
                gold_units=_unique(gold),
                passage_ids=_unique(passage_ids),
                meta=meta,
            )
        )
    _check_unique_qids(questions, questions_path)
    return Dataset(name=name, questions=questions, passages=corpus.passages, aliases=corpus.aliases)


def _musique_hops(qid: str, decomposition: list) -> int | None:
    # MuSiQue ids start with "<n>hop"; fall back on the decomposition length.
    head = qid.split("hop", 1)[0]
    if head.isdigit():
        return int(head)
    return len(decomposition) or None


def _load_ecphory_jsonl(path: str | Path, name: str) -> tuple[list[tuple[int, dict]], _PooledCorpus]:
    """Read an EcphoryRAG subset file and pool its chunks (prefix stripped)."""
    records = _read_jsonl(path)
    corpus = _PooledCorpus(name)
    for lineno, rec in records:
        where = f"{path}:{lineno}"
        for chunk in _need(rec, "chunks", where):
            title = _need(chunk, "title", where)
            text = strip_title_prefix(title, _need(chunk, "chunk", where))
            cid = str(_need(chunk, "id", where))
            corpus.add(title, text, cid, source_id=cid)
    return records, corpus


def _ecphory_question(
    rec: dict, where: str, corpus: _PooledCorpus, gold: list[str], meta: dict
) -> Question:
    pids = [corpus.aliases.get(str(c["id"]), str(c["id"])) for c in rec["chunks"]]
    return Question(
        qid=str(_need(rec, "id", where)),
        question=_need(rec, "question", where),
        answers=_answers(_need(rec, "answer", where), rec.get("answer_aliases")),
        gold_units=_unique(gold),
        passage_ids=_unique(pids),
        meta=meta,
    )


def load_2wiki(path: str | Path) -> Dataset:
    """EcphoryRAG 2Wiki subset: gold = the chunks whose title is a supporting-fact title."""
    records, corpus = _load_ecphory_jsonl(path, "2wiki")
    questions = []
    for lineno, rec in records:
        where = f"{path}:{lineno}"
        chunk_titles = {c["title"] for c in rec["chunks"]}
        # Supporting-fact ids name sentences, not chunks: only their titles link to chunks.
        gold_titles = _unique(_need(sf, "title", where) for sf in _need(rec, "supporting_facts", where))
        missing = [t for t in gold_titles if t not in chunk_titles]
        if missing:
            raise ValueError(f"{where}: supporting-fact titles with no chunk: {missing}")
        meta = {k: rec[k] for k in ("hop", "type", "decomposition", "evidences") if k in rec}
        if "hop" in meta:
            meta["hops"] = meta.pop("hop")
        gold = [unit_of("2wiki", t, "") for t in gold_titles]
        questions.append(_ecphory_question(rec, where, corpus, gold, meta))
    _check_unique_qids(questions, Path(path))
    return Dataset(name="2wiki", questions=questions, passages=corpus.passages, aliases=corpus.aliases)


def load_hotpotqa(path: str | Path) -> Dataset:
    """EcphoryRAG HotpotQA subset: gold = the chunk ids listed in `supporting_facts`."""
    records, corpus = _load_ecphory_jsonl(path, "hotpotqa")
    questions = []
    for lineno, rec in records:
        where = f"{path}:{lineno}"
        own_ids = {str(c["id"]) for c in rec["chunks"]}
        gold = []
        for sf in _need(rec, "supporting_facts", where):
            cid = str(_need(sf, "id", where))
            if cid not in own_ids:
                raise ValueError(f"{where}: supporting fact {cid!r} is not one of the question's chunks")
            gold.append(corpus.passages[corpus.aliases.get(cid, cid)].unit)
        meta = {k: rec[k] for k in ("hop", "type", "decomposition") if k in rec}
        if "hop" in meta:
            meta["hops"] = meta.pop("hop")
        questions.append(_ecphory_question(rec, where, corpus, gold, meta))
    _check_unique_qids(questions, Path(path))
    return Dataset(name="hotpotqa", questions=questions, passages=corpus.passages, aliases=corpus.aliases)


def _read_markdown_doc(path: Path) -> tuple[str, str]:
    """Title = the first `# ` heading line (file stem if none); text = everything else."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return line[2:].strip(), "\n".join(lines[:i] + lines[i + 1 :]).strip()
    return path.stem, "\n".join(lines).strip()


def load_sample(questions_path: str | Path, docs_dir: str | Path) -> Dataset:
    """memrag's own sample corpus: `docs_dir/*.md` plus a questions.json list.

    Every question is asked over the whole (small) corpus, so each question's passages are
    all documents. Recall counts by document id (the file stem).
    """
    questions_path, docs_dir = Path(questions_path), Path(docs_dir)
    if not docs_dir.is_dir():
        raise FileNotFoundError(f"sample documents folder not found: {docs_dir}")
    # Documents are identified by file name, never merged by content.
    passages: dict[str, Passage] = {}
    for doc in sorted(docs_dir.glob("*.md")):
        title, text = _read_markdown_doc(doc)
        passages[doc.stem] = Passage(doc.stem, title, text, unit_of("sample", title, text, doc.stem))
    if not passages:
        raise ValueError(f"{docs_dir}: no .md documents")
    all_pids = list(passages)

    raw = _read_json(questions_path)
    if not isinstance(raw, list):
        raise ValueError(f"{questions_path}: expected a JSON list of questions")
    questions = []
    for n, rec in enumerate(raw):
        qid = str(_need(rec, "id", f"{questions_path} question #{n}"))
        where = f"{questions_path} question {qid}"
        gold_docs = [str(d) for d in _need(rec, "gold_docs", where)]
        unknown = [d for d in gold_docs if d not in passages]
        if unknown:
            raise ValueError(f"{where}: gold_docs not found in {docs_dir}: {unknown}")
        meta = {k: rec[k] for k in ("hops", "kind") if k in rec}
        questions.append(
            Question(
                qid=qid,
                question=_need(rec, "question", where),
                answers=_answers(_need(rec, "answer", where), rec.get("answer_aliases")),
                gold_units=_unique(unit_of("sample", "", "", d) for d in gold_docs),
                passage_ids=list(all_pids),
                meta=meta,
            )
        )
    _check_unique_qids(questions, questions_path)
    return Dataset(name="sample", questions=questions, passages=passages)


def load_dataset(name: str, path: str | Path, corpus: str | Path | None = None) -> Dataset:
    """Load by name. `corpus`: the MuSiQue/HippoRAG corpus file, or the sample docs folder.

    For "sample", `path` may be the questions file or the sample folder (questions.json with
    the documents in `docs/` or beside it).
    """
    if name in ("musique", "hipporag"):
        return load_musique(path, corpus, name=name)
    if corpus is not None and name in ("2wiki", "hotpotqa"):
        raise ValueError(f"{name}: the corpus is built from the questions file; do not pass one")
    if name == "2wiki":
        return load_2wiki(path)
    if name == "hotpotqa":
        return load_hotpotqa(path)
    if name == "sample":
        path = Path(path)
        if path.is_dir():
            questions = path / "questions.json"
            if corpus is not None:
                docs = Path(corpus)
            else:
                docs = path / "docs" if (path / "docs").is_dir() else path
            return load_sample(questions, docs)
        if corpus is None:
            raise ValueError("sample: pass the documents folder as corpus")
        return load_sample(path, corpus)
    raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASET_NAMES)}")


# --------------------------------------------------------------------------- scopes


def question_passages(ds: Dataset, q: Question) -> list[Passage]:
    """The passages a question came with (its own small corpus in the per-question scope)."""
    return [ds.passages[pid] for pid in q.passage_ids]


def scoped_corpus(
    ds: Dataset, scope: str, limit: int | None = None
) -> tuple[list[Question], list[Passage]]:
    """The first `limit` questions and the corpus the scope names.

    pooled: every pooled passage. limit-pooled: the union of those questions' passages.
    per-question: the same union; the runner indexes each question's own passages
    (`question_passages`) separately.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown corpus scope {scope!r}; expected one of {', '.join(SCOPES)}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of questions, got {limit}")
    questions = ds.questions if limit is None else ds.questions[:limit]
    if scope == "pooled":
        return questions, list(ds.passages.values())
    pids = _unique(pid for q in questions for pid in q.passage_ids)
    return questions, [ds.passages[pid] for pid in pids]
