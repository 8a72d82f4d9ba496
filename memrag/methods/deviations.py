"""Where memrag departs from the NeuroPath, EcphoryRAG and HippoRAG 2 papers, as data.

The rows shared by every method are here; each method's own rows live in its wing
(memrag/methods/<name>/deviations.py). One source for every place that lists them: each method's view in the app, the
README table and the evaluation summaries. An entry says what differs, what the
paper (or its released code) does, what memrag does, and why.
"""

from __future__ import annotations

from dataclasses import asdict

from memrag.methods import registry
from memrag.methods.paper_kit import Deviation


SHARED: tuple[Deviation, ...] = (  # the rows that apply to every method
    Deviation("all", "Models",
              "GPT-4o-mini (or GPT-3.5) for extraction and answers; Contriever or bge-m3 embeddings",
              "Qwen2.5-Coder-1.5B embedded, or phi4 through Ollama; all-MiniLM-L6-v2 embeddings",
              "runs offline on a laptop's CPU; absolute scores are lower than the papers'"),
    Deviation("all", "Indexing pass",
              "each method runs its own extraction prompt over the corpus",
              "one schema-constrained call per chunk returns entities (type, description, importance) "
              "and triples for both methods",
              "a corpus costs one pass; the papers' indexing-token figures are what it is compared with"),
    Deviation("all", "Query entities / cues",
              "NeuroPath extracts query entities; EcphoryRAG extracts cues, each in its own call",
              "one shared call gives both; it is billed to each method and counted once in totals",
              "the same question needs the same names; one call saves tokens and time"),
    Deviation("all", "Extraction prompt and clean-up",
              "the papers keep their extractor's names as returned (OpenIE phrases, LLM entity lists)",
              "one invented example turn in the extraction prompt; names cleaned against the passage: "
              "leading lowercase articles dropped, an object's leading preposition moved into the relation, "
              "clause endpoints kept as triple values without an entity node, foreign-script fragments "
              "repaired, descriptions cut at a word; the entity key ignores a leading 'the'",
              "a 1.5B extractor put 'in 1920', 'of the Varrow Coast' and whole clauses in name slots: "
              "13 % of the sample's entity names, which both methods' graphs inherited"),
    Deviation("all", "Answer prompt",
              "each paper's own zero-shot answer prompt",
              "one prompt for all methods: two invented example turns (a bridge and a comparison), a "
              "one-sentence reasoning capped at 320 characters, a short answer; replies that reach a cap "
              "are counted in every evaluation",
              "with a 200-character cap and no example, 17 of 59 recorded answers stopped mid-thought "
              "and 3 answered with sentences"),
)


def _deviations() -> tuple[Deviation, ...]:
    """The shared rows, then each method's (from its wing), graph methods first as in the README."""
    own = [d for name in registry.display_order() for d in (registry.get(name).optional(
        registry.get(name).deviations_at) or ())]
    return (*SHARED, *own)


def _method_names() -> dict[str, str]:
    return {**registry.labels(), "all": "All methods"}


def __getattr__(attr: str) -> object:
    """DEVIATIONS and METHOD_NAMES, read from the registry now."""
    if attr == "DEVIATIONS":
        return _deviations()
    if attr == "METHOD_NAMES":
        return _method_names()
    raise AttributeError(attr)


def deviations_for(method: str, *, include_shared: bool = True) -> list[dict[str, str]]:
    """The deviations that apply to one method (with those shared by all methods first)."""
    names = _method_names()
    if method not in names:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(names)}")
    # A method whose retrieval makes no LLM call (dense): of the shared rows only the models apply.
    calls_llm = method == "all" or registry.get(method).uses_llm(registry.get(method).params())
    rows = [d for d in _deviations() if d.method == method or (
        include_shared and d.method == "all" and (calls_llm or d.what == "Models"))]
    rows.sort(key=lambda d: d.method != "all")
    return [asdict(d) for d in rows]


def all_deviations() -> list[dict[str, str]]:
    return [asdict(d) for d in _deviations()]


def markdown_table() -> str:
    """The README's deviations table (regenerate with `python -m memrag.deviations`)."""
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    names = _method_names()
    rows = ["| method | what | papers / released code | memrag | why |", "|---|---|---|---|---|"]
    for d in _deviations():
        rows.append(f"| {names[d.method]} | {cell(d.what)} | {cell(d.paper)} | {cell(d.memrag)} | "
                    f"{cell(d.why)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
