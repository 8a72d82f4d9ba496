"""The evaluation runner, its outputs and its CLI, on the tiny fixtures in tests/fixtures/eval,
with a scripted LLM (replies computed from each prompt, written below) and the hash embedder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memrag.index import store
from memrag.eval import report
from memrag.eval.datasets import load_dataset, question_passages
from memrag.eval.config import EvalConfig
from memrag.eval.rundir import RESULTS, RUN, SUMMARY, read_results
from memrag.eval.runner import run_eval, run_to_end
from memrag.eval.scoring import ChunkUnits, unit_fates
from memrag.eval.gold import NOT_IN_MEMORY
from memrag.llm.base import LLMUnavailable
from memrag.trace import RankedChunk, Trace
from scripted import HashEmbedder, ScriptedLLM

FIX = Path(__file__).parent / "fixtures" / "eval"
SAMPLE = FIX / "sample"
MUSIQUE_Q, MUSIQUE_C = FIX / "musique_questions.json", FIX / "musique_corpus.json"
CAPS = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")
ANSWERS = {"Which river feeds the mill?": "the Ouse.", "Who built the mill?": "Ada"}
SUMMARY_KEYS = {"same_top5_as_dense", "stamp", "scope", "methods", "indexing", "paired", "all_methods", "deviations"}
METHOD_KEYS = {"n", "recall@1", "recall@2", "recall@5", "recall@10", "em", "raw_em", "f1",
               "prompt_tokens_per_query", "completion_tokens_per_query", "llm_calls_per_query",
               "seconds_per_query", "llm_seconds_per_query", "gold_fate", "answers_capped", "ci95"}


# ------------------------------------------------------------------ the scripted model
def _extract(messages, stage):
    """Entities = the title and the capitalised names of the passage; triples link the title to each."""
    user = messages[-1]["content"]  # the passage's turn (the first user turn is the invented example)
    title = user.split("\n", 1)[0].removeprefix("Title: ")
    names = list(dict.fromkeys([title] + CAPS.findall(user.split("Passage:\n", 1)[1])))
    return {"entities": [{"name": n, "type": "thing", "description": f"named in {title}", "importance": 3}
                         for n in names],
            "triples": [[title, "mentions", n] for n in names[1:]]}


def _question_of(messages) -> str:
    return messages[-1]["content"].rsplit("Question: ", 1)[-1]


def scripted(fail_on: str | None = None) -> ScriptedLLM:
    """Answers "the Ouse." to s1 (right after normalising, wrong raw) and "Ada" to s2 (F1 2/3).
    With `fail_on`, the engine goes away when asked to answer that question."""
    def answer(messages, stage):
        q = _question_of(messages)
        if q == fail_on:
            raise LLMUnavailable("the engine went away")
        return {"reasoning": "", "answer": ANSWERS.get(q, "unknown"), "cited": [1]}

    return ScriptedLLM({
        "index.extract": _extract,
        "query.entities": lambda m, s: {"entities": CAPS.findall(m[-1]["content"])},
        "neuropath.track": lambda m, s: {"reasoning_chain": "", "valid_ids": [1], "expansion_requirement": "",
                                         "expand_ids": [], "continue": 0},
        "hipporag2.recognition": lambda m, s: {"keep": [1]},
        "answer": answer,
    })


def no_llm():
    raise AssertionError("this run must not need an LLM")


def sample_config(out: Path, **kw) -> EvalConfig:
    return EvalConfig(dataset="sample", data=SAMPLE, out=out, scope="pooled", **kw)


def openie_files(tmp_path: Path) -> Path:
    """An OpenIE file index-aligned with the MuSiQue fixture corpus."""
    corpus = json.loads(MUSIQUE_C.read_text())
    docs = [{"title": p["title"], "text": p["text"], "extracted_entities": [p["title"]],
             "extracted_triples": [[p["title"], "is", "described"]]} for p in corpus]
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": docs}))
    return path


def _stable(obj):
    """A record or summary without what legitimately differs between two runs (times, paths, and
    whether HippoRAG 2's cached graph was built by this process or reused)."""
    if isinstance(obj, dict):
        return {k: _stable(v) for k, v in obj.items()
                if k not in ("seconds", "retrieval_seconds", "seconds_per_query", "started", "path", "command",
                             "graph_built", "graph_seconds")}
    if isinstance(obj, list):
        return [_stable(v) for v in obj]
    return obj


# ------------------------------------------------------------------ a whole run
def test_sample_run_scores_records_and_summarises(tmp_path):
    out = tmp_path / "run"
    # the hash embedder's query entities lie far from every node: no seed floor, so paths are tracked
    config = sample_config(out, params={"neuropath": {"seed_floor": 0.0}})
    summary = run_to_end(run_eval(config, llm=scripted(), embedder=HashEmbedder()))
    records = read_results(out / RESULTS)
    assert [r["qid"] for r in records] == ["s1", "s2"]

    # recall@k recomputed here from each stored ranking: sample units are document ids
    memory = store.load(out / "memory")
    for r in records:
        for m, res in r["methods"].items():
            docs = list(dict.fromkeys(memory.chunks[x["chunk_id"]].doc_id for x in res["trace"]["ranked"]))
            for k in (1, 2, 5, 10):
                expect = len(set(r["gold_units"]) & set(docs[:k])) / len(r["gold_units"])
                assert res["metrics"][f"recall@{k}"] == expect, (r["qid"], m, k)
            assert res["top_passages"] == docs[:10]
            # one fate per gold passage, and "in the top k" agrees with recall@5
            assert len(res["gold_fate"]) == len(r["gold_units"])
            found = {"in the top k", "found by a path", "recovered only by completion", "in the context"}
            assert sum(f["fate"] in found for f in res["gold_fate"]) / len(r["gold_units"]) == res["metrics"]["recall@5"]

    # answers: "the Ouse." is right once normalised but not raw; "Ada" scores F1 2/3
    for m in ("dense", "neuropath", "ecphory"):
        e = summary["methods"][m]
        assert (e["em"], e["raw_em"]) == (0.5, 0.0)
        assert e["f1"] == pytest.approx((1 + 2 / 3) / 2)
        assert e["n"] == 2

    # tokens: each method is billed its own calls (the shared query-entity call to each);
    # across methods that call counts once
    for r in records:
        calls = {m: res["trace"]["llm_calls"] for m, res in r["methods"].items()}
        for m, cs in calls.items():
            assert r["methods"][m]["tokens"]["prompt_tokens"] == sum(c["prompt_tokens"] for c in cs)
            assert r["methods"][m]["tokens"]["llm_calls"] == len(cs)
        assert [c["stage"] for c in calls["dense"]] == ["answer"]
        assert r["all_methods"]["llm_calls"] == sum(len(cs) for cs in calls.values()) - 1  # shared call once
    assert summary["methods"]["dense"]["llm_calls_per_query"] == 1.0
    assert summary["methods"]["dense"]["llm_seconds_per_query"] is not None  # the calls' own seconds, kept

    on_disk = json.loads((out / SUMMARY).read_text())
    assert set(on_disk) == SUMMARY_KEYS
    # a method with a path tracker also carries its precision (memrag.eval.tracker_precision) and
    # how far it got towards the gold passages (memrag.methods.neuropath.reach)
    assert all(set(e) == METHOD_KEYS | ({"tracker_precision", "reach"} if m == "neuropath" else set())
               for m, e in on_disk["methods"].items())
    reach = on_disk["methods"]["neuropath"]["reach"]
    assert list(reach) == ["gold", "within_max_hops", "on_listed_paths", "kept"]
    assert reach["gold"] == sum(len(r["gold_units"]) for r in records)
    assert reach["gold"] >= reach["within_max_hops"] >= reach["on_listed_paths"] >= reach["kept"]
    assert reach == {k: sum(r["methods"]["neuropath"]["reach"][k] for r in records) for k in reach}
    # …counted on the real traces: the scripted tracker keeps path 1, the top of the list, every time
    for r in records:
        assert "tracker" not in r["methods"]["dense"]
        hops = r["methods"]["neuropath"]["trace"]["details"]["neuropath"]["hops"]
        assert [h["hop"] for h in r["methods"]["neuropath"]["tracker"]] == [h["hop"] for h in hops]
        assert all(h["gold_kept"] == h["gold_top"] for h in r["methods"]["neuropath"]["tracker"])
    overall = on_disk["methods"]["neuropath"]["tracker_precision"][-1]
    assert (overall["hop"], overall["kept_new"], overall["diff"], overall["recall"]) == ("all", 2, 0, 0.5)
    assert set(on_disk["methods"]["neuropath"]["ci95"]) == {"recall@1", "recall@2", "recall@5", "recall@10",
                                                            "em", "raw_em", "f1"}
    assert set(on_disk["paired"]) == {"dense vs neuropath", "dense vs ecphory", "neuropath vs ecphory",
                                      "dense vs hipporag2", "neuropath vs hipporag2", "ecphory vs hipporag2"}
    assert set(on_disk["paired"]["dense vs ecphory"]["f1"]) == {"wins", "losses", "ties", "mean_diff", "diff_ci95"}
    stamp = on_disk["stamp"]
    assert (stamp["scope"], stamp["dataset"], stamp["corpus_size"], stamp["llm_model"]) == ("pooled", "sample", 3,
                                                                                           "scripted-1")
    assert set(stamp["params"]) == {"dense", "neuropath", "ecphory", "hipporag2"} and stamp["stage_versions"]
    assert on_disk["indexing"]["source"] == "extraction" and on_disk["indexing"]["documents"] == 3

    md = (out / "summary.md").read_text()
    assert "| method | n | R@1 | R@2 |" in md and "| NeuroPath | 2 |" in md and "| neuropath |" not in md
    assert "| Dense vs EcphoryRAG | " in md  # pairs by display name too (the file keeps "dense vs ecphory")
    page = (out / "report.html").read_text()
    assert "Plotly.newPlot" in page and not re.search(r"<script[^>]+src=", page)
    assert "<td>NeuroPath</td>" in page and "<td>neuropath</td>" not in page  # the HTML tables too


def test_paired_counts_follow_the_per_question_scores(tmp_path):
    out = tmp_path / "run"
    run_to_end(run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder()))
    records = read_results(out / RESULTS)
    # Make dense lose s1's F1 in the stored lines: the summary is recomputed from them alone.
    records[0]["methods"]["dense"]["metrics"]["f1"] = 0.0
    run = json.loads((out / "run.json").read_text())
    s = report.summarise(records, run)
    f1 = s["paired"]["dense vs ecphory"]["f1"]
    assert (f1["wins"], f1["losses"], f1["ties"]) == (0, 1, 1)
    assert f1["mean_diff"] == pytest.approx(-0.5) and f1["diff_ci95"][0] <= -0.5 <= f1["diff_ci95"][1]
    assert s["methods"]["dense"]["f1"] == pytest.approx((0 + 2 / 3) / 2)


# ------------------------------------------------------------------ resume
def test_a_closed_run_resumes_and_matches_an_uninterrupted_one(tmp_path):
    whole = tmp_path / "whole"
    run_to_end(run_eval(sample_config(whole), llm=scripted(), embedder=HashEmbedder()))

    out = tmp_path / "cut"
    run = run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder())
    for ev in run:
        if ev.kind == "question":
            break
    run.close()  # e.g. the app's job was cancelled after question 1
    first_line = (out / RESULTS).read_bytes()
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1"]

    llm = scripted()
    events = list(run_eval(sample_config(out), llm=llm, embedder=HashEmbedder()))
    assert events[0].data["done"] == 1 and events[0].data["todo"] == 1
    assert not any(c["stage"] == "index.extract" for c in llm.calls)  # the memory was reopened, not rebuilt
    assert {_question_of(c["messages"]) for c in llm.calls if c["stage"] == "answer"} == {"Who built the mill?"}
    assert (out / RESULTS).read_bytes().startswith(first_line)
    resumed, reference = read_results(out / RESULTS), read_results(whole / RESULTS)
    assert [r["qid"] for r in resumed] == ["s1", "s2"]
    assert _stable(resumed) == _stable(reference)
    assert _stable(json.loads((out / SUMMARY).read_text())) == _stable(json.loads((whole / SUMMARY).read_text()))


def test_an_engine_failure_keeps_finished_questions_and_a_rerun_does_the_rest(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(LLMUnavailable):
        run_to_end(run_eval(sample_config(out), llm=scripted(fail_on="Who built the mill?"), embedder=HashEmbedder()))
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1"]
    summary = run_to_end(run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder()))
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1", "s2"]
    assert summary["methods"]["dense"]["n"] == 2


def test_a_torn_last_line_is_cut_off_and_that_question_redone(tmp_path):
    out = tmp_path / "run"
    run_to_end(run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder()))
    lines = (out / RESULTS).read_text().splitlines(keepends=True)
    (out / RESULTS).write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # a crash half-way through line 2
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1"]
    assert (out / RESULTS).read_text() == lines[0]  # the torn part is gone, nothing else
    run_to_end(run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder()))
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1", "s2"]


def test_a_damaged_line_or_other_settings_stop_the_run_and_keep_the_file(tmp_path):
    out = tmp_path / "run"
    run_to_end(run_eval(sample_config(out), llm=scripted(), embedder=HashEmbedder()))
    before = (out / RESULTS).read_bytes()
    with pytest.raises(ValueError, match=r'methods: \["dense", "neuropath", "ecphory", "hipporag2"\] → \["dense"\]'):
        run_to_end(run_eval(sample_config(out, methods=("dense",)), llm=scripted(), embedder=HashEmbedder()))
    with pytest.raises(ValueError, match='scope: "pooled" → "limit-pooled"'):
        run_to_end(run_eval(EvalConfig(dataset="sample", data=SAMPLE, out=out, scope="limit-pooled", limit=1),
                            llm=scripted(), embedder=HashEmbedder()))
    assert (out / RESULTS).read_bytes() == before
    (out / RESULTS).write_bytes(b"not json\n" + before)
    with pytest.raises(ValueError, match=r"results.jsonl:1: unreadable"):
        read_results(out / RESULTS)



def test_a_run_folder_written_before_a_parameter_rename_resumes(tmp_path):
    """EcphoryRAG's rounds were called depth: a run.json that says depth is the same settings."""
    out = tmp_path / "run"
    run = run_eval(sample_config(out, methods=("ecphory",)), llm=scripted(), embedder=HashEmbedder())
    for ev in run:
        if ev.kind == "question":
            break
    run.close()
    recorded = json.loads((out / RUN).read_text())
    params = recorded["identity"]["params"]["ecphory"]
    params["depth"] = params.pop("rounds")  # as the folder was written before the rename
    (out / RUN).write_text(json.dumps(recorded))
    run_to_end(run_eval(sample_config(out, methods=("ecphory",)), llm=scripted(), embedder=HashEmbedder()))
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["s1", "s2"]
    params["depth"] = 1  # other settings are still told apart
    (out / RUN).write_text(json.dumps(recorded))
    with pytest.raises(ValueError, match="other settings"):
        run_to_end(run_eval(sample_config(out, methods=("ecphory",)), llm=scripted(), embedder=HashEmbedder()))


# ------------------------------------------------------------------ scopes
def _docs(path: Path) -> set[tuple[str, str]]:
    return {(d.title, d.text) for d in store.load(path).documents}


def _passages(passages) -> set[tuple[str, str]]:
    return {(p.title, p.text) for p in passages}


def test_pooled_openie_import_indexes_the_whole_corpus_without_an_llm(tmp_path):
    openie = openie_files(tmp_path)
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, corpus=MUSIQUE_C, import_openie=openie,
                     out=tmp_path / "run", scope="pooled", methods=("dense",), answer=False)
    summary = run_to_end(run_eval(cfg, embedder=HashEmbedder(), llm_factory=no_llm))
    ds = load_dataset("musique", MUSIQUE_Q, MUSIQUE_C)
    assert _docs(tmp_path / "run" / "memory") == _passages(ds.passages.values())
    assert len(ds.passages) == 5 and summary["stamp"]["corpus_size"] == 5  # "Delta" belongs to no question
    assert summary["indexing"]["source"] == "openie-import" and summary["indexing"]["triples"] == 5
    assert summary["methods"]["dense"]["em"] is None and "em" not in summary["methods"]["dense"]["ci95"]
    assert summary["stamp"]["llm_model"] == "" and summary["methods"]["dense"]["llm_calls_per_query"] == 0


def test_limit_pooled_indexes_the_first_questions_passages_only(tmp_path):
    ds = load_dataset("musique", MUSIQUE_Q, MUSIQUE_C)
    first = _passages(question_passages(ds, ds.questions[0]))
    # by extraction
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "x", scope="limit-pooled", limit=1,
                     methods=("dense", "ecphory"), answer=False)
    s = run_to_end(run_eval(cfg, llm=scripted(), embedder=HashEmbedder()))
    assert _docs(tmp_path / "x" / "memory") == first and s["stamp"]["corpus_size"] == 3
    assert s["methods"]["dense"]["n"] == 1 and s["indexing"]["source"] == "extraction"
    # from an OpenIE subset of the corpus file
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, corpus=MUSIQUE_C, import_openie=openie_files(tmp_path),
                     out=tmp_path / "o", scope="limit-pooled", limit=1, methods=("dense",), answer=False)
    run_to_end(run_eval(cfg, embedder=HashEmbedder(), llm_factory=no_llm))
    assert _docs(tmp_path / "o" / "memory") == first


def test_per_question_builds_one_memory_per_question_and_reuses_it(tmp_path):
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "run", scope="per-question",
                     methods=("dense", "ecphory"), answer=False)
    llm = scripted()
    summary = run_to_end(run_eval(cfg, llm=llm, embedder=HashEmbedder()))
    ds = load_dataset("musique", MUSIQUE_Q)
    for q in ds.questions:
        assert _docs(tmp_path / "run" / "memories" / q.qid) == _passages(question_passages(ds, q))
    assert sum(c["stage"] == "index.extract" for c in llm.calls) == 6  # 3 passages × 2 questions
    ix = summary["indexing"]
    assert ix["per_question"] and ix["memories"] == 2 and ix["documents"] == 6 and ix["built"] == 2
    records = read_results(tmp_path / "run" / RESULTS)
    assert records[0]["memory"] != records[1]["memory"]

    (tmp_path / "run" / RESULTS).write_text("")  # evaluate again: the memories are reused
    llm = scripted()
    again = run_to_end(run_eval(cfg, llm=llm, embedder=HashEmbedder()))
    assert not any(c["stage"] == "index.extract" for c in llm.calls)
    assert again["indexing"]["built"] == 0 and _stable(again["methods"]) == _stable(summary["methods"])


def test_two_wiki_units_are_titles_and_rankings_are_deduplicated_by_them(tmp_path):
    cfg = EvalConfig(dataset="2wiki", data=FIX / "2wiki.jsonl", out=tmp_path / "run", scope="pooled",
                     methods=("dense",), answer=False)
    run_to_end(run_eval(cfg, llm=scripted(), embedder=HashEmbedder()))
    memory = store.load(tmp_path / "run" / "memory")
    titles = [c.title for c in memory.chunks]
    assert titles.count("Yan Person") == 2  # two passages of one title: one recall unit
    for r in read_results(tmp_path / "run" / RESULTS):
        ranked = list(dict.fromkeys(titles[x["chunk_id"]] for x in r["methods"]["dense"]["trace"]["ranked"]))
        for k in (1, 2):
            expect = len(set(r["gold_units"]) & set(ranked[:k])) / len(r["gold_units"])
            assert r["methods"]["dense"]["metrics"][f"recall@{k}"] == expect


def test_a_memory_of_another_corpus_is_refused(tmp_path):
    sample_out = tmp_path / "sample"
    run_to_end(run_eval(sample_config(sample_out), llm=scripted(), embedder=HashEmbedder()))
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "m", scope="pooled", methods=("dense",),
                     answer=False, memory=sample_out / "memory")
    with pytest.raises(ValueError, match="not passages of this musique scope"):
        run_to_end(run_eval(cfg, llm=scripted(), embedder=HashEmbedder()))


def test_a_gold_passage_missing_from_the_memory_has_its_own_fate():
    ds = load_dataset("sample", SAMPLE)
    q = ds.questions[0]  # gold: mill, river
    units = ChunkUnits({0: "mill"}, {0: "mill"}, {"mill": [0]}, ["river"])
    t = Trace(method="dense", question=q.question, ranked=[RankedChunk(0, 0, 0.9, "dense")])
    fates = unit_fates(t, q, units, k=5)
    assert [(f["unit"], f["fate"]) for f in fates] == [("mill", "in the top k"), ("river", NOT_IN_MEMORY)]


def test_bad_settings_are_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="needs --corpus"):
        run_to_end(run_eval(EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "a",
                                       import_openie=tmp_path / "x.json"), embedder=HashEmbedder()))
    with pytest.raises(ValueError, match="unknown or no method"):
        run_to_end(run_eval(sample_config(tmp_path / "b", methods=("hippo",)), embedder=HashEmbedder()))
    with pytest.raises(ValueError, match="needs an LLM"):
        run_to_end(run_eval(sample_config(tmp_path / "c"), embedder=HashEmbedder()))
    assert not any((tmp_path / d).exists() for d in "abc")  # nothing written


# ------------------------------------------------------------------ CLI and the results page
def test_cli_eval_and_the_results_page(tmp_path, monkeypatch, capsys):
    import memrag.embed
    import memrag.llm.factory
    from memrag.cli.main import main

    monkeypatch.setattr(memrag.embed, "get_embedder", lambda *a, **k: HashEmbedder())
    monkeypatch.setattr(memrag.llm.factory, "make_llm", lambda *a, **k: no_llm())
    openie = openie_files(tmp_path)
    out = tmp_path / "run"
    argv = ["eval", "--dataset", "musique", "--data", str(MUSIQUE_Q), "--corpus", str(MUSIQUE_C),
            "--import-openie", str(openie), "--scope", "pooled", "--methods", "dense", "--no-answer",
            "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "| Dense | 2 |" in printed.out and "2 questions, 0 already done" in printed.err
    assert main(argv + ["--limit", "1"]) == 0  # pooled: a smaller limit reuses the finished lines
    assert "1 questions, 1 already done" in capsys.readouterr().err

    assert main(["eval", "--dataset", "musique", "--data", str(MUSIQUE_Q), "--import-openie", str(openie),
                 "--scope", "pooled", "--out", str(tmp_path / "bad")]) == 1
    assert "needs --corpus" in capsys.readouterr().err
    assert main(argv[:-2] + ["--out", str(tmp_path / "z"), "--limit", "0"]) == 2
    # a dense retrieval run with no OpenIE file indexes the passages alone, with no LLM
    assert main(["eval", "--dataset", "musique", "--data", str(MUSIQUE_Q), "--scope", "pooled",
                 "--methods", "dense", "--no-answer", "--out", str(tmp_path / "p")]) == 0
    assert "| Dense | 2 |" in capsys.readouterr().out

    # the page is built from summary.json alone: change a figure there and the page follows
    summary = json.loads((out / SUMMARY).read_text())
    summary["methods"]["dense"]["recall@2"] = 0.123
    (out / SUMMARY).write_text(json.dumps(summary))
    page_path = tmp_path / "docs" / "results.md"
    assert report.main(["--out", str(page_path), str(out)]) == 0
    page = page_path.read_text()
    assert "## musique — pooled, 1 questions" in page and "| Dense | 1 | " in page and " 12.3 [" in page
    assert "Source: `run/summary.json`" in page
    notes = tmp_path / "notes.md"
    notes.write_text("## Reading\n\nDense found the bridge passage.\n")
    assert report.main(["--out", str(page_path), "--notes", str(notes), str(out)]) == 0
    page = page_path.read_text()
    assert page.index("Dense found the bridge passage.") < page.index("## musique — pooled")
    assert report.main(["--out", str(page_path), str(tmp_path / "nowhere")]) == 1


def test_a_dense_retrieval_run_indexes_passages_only_and_the_graph_methods_refuse_that_memory(tmp_path):
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "d", scope="pooled",
                     methods=("dense",), answer=False)
    summary = run_to_end(run_eval(cfg, embedder=HashEmbedder(), llm_factory=no_llm))
    ds = load_dataset("musique", MUSIQUE_Q)
    memory = store.load(tmp_path / "d" / "memory")
    assert _docs(tmp_path / "d" / "memory") == _passages(ds.passages.values())
    assert summary["indexing"]["source"] == "passages-only" and not memory.entities and not memory.triples
    assert len(memory.chunk_vecs) == len(memory.chunks) and summary["methods"]["dense"]["n"] == 2
    # an ecphory run on that memory is refused with the reason, and so is an answer
    cfg = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "e", memory=tmp_path / "d" / "memory",
                     scope="pooled", methods=("dense", "ecphory"), answer=False)
    with pytest.raises(ValueError, match="passages only"):
        run_to_end(run_eval(cfg, llm=scripted(), embedder=HashEmbedder()))
    from memrag.ask import ask
    with pytest.raises(ValueError, match="passages only"):
        ask(memory, "Who built the mill?", llm=scripted(), embedder=HashEmbedder(), methods=("dense",))
    assert ask(memory, "Who built the mill?", llm=None, embedder=HashEmbedder(), methods=("dense",),
               answer=False)[0].ranked


def test_a_dense_run_extends_an_extraction_memory_rather_than_replacing_it(tmp_path):
    first = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "r", scope="limit-pooled", limit=1,
                       methods=("dense", "ecphory"), answer=False)
    run_to_end(run_eval(first, llm=scripted(), embedder=HashEmbedder()))
    entities = len(store.load(tmp_path / "r" / "memory").entities)
    more = EvalConfig(dataset="musique", data=MUSIQUE_Q, out=tmp_path / "r2", memory=tmp_path / "r" / "memory",
                      scope="pooled", methods=("dense",), answer=False)
    llm = scripted()
    s = run_to_end(run_eval(more, llm=llm, embedder=HashEmbedder(), llm_factory=lambda: llm))
    memory = store.load(tmp_path / "r" / "memory")
    assert s["indexing"]["source"] == "extraction" and len(memory.entities) > entities


def test_a_run_on_replayed_replies_says_its_seconds_are_a_replays(tmp_path):
    llm = scripted()
    live = run_to_end(run_eval(sample_config(tmp_path / "live", methods=("dense",)), llm=llm,
                               embedder=HashEmbedder()))
    llm.replays = True  # what memrag.llm.recordings.ReplayLLM says of itself
    replay = run_to_end(run_eval(sample_config(tmp_path / "replay", methods=("dense",)), llm=llm,
                                 embedder=HashEmbedder()))
    assert live["stamp"]["replies"] == "live" and replay["stamp"]["replies"] == "recorded"
    assert "replay's time" in report.summary_markdown(replay)
    assert "replay's time" not in report.summary_markdown(live)


@pytest.mark.parametrize("given", ["all", "dense,hipporag2"])
def test_cli_eval_methods_all_names_every_registered_method(tmp_path, given):
    from memrag.ask import METHODS
    from memrag.cli.eval import config_from_args
    from memrag.cli.main import build_parser

    parser, _ = build_parser()
    args = parser.parse_args(["eval", "--dataset", "sample", "--scope", "pooled", "--methods", given,
                              "--out", str(tmp_path)])
    want = tuple(METHODS) if given == "all" else ("dense", "hipporag2")
    assert config_from_args(args).methods == want
    assert parser.parse_args(["eval", "--dataset", "sample", "--scope", "pooled", "--out", str(tmp_path)]).methods == "all"
