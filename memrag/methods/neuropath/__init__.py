"""NeuroPath (place cells): goal-directed path tracking over triples ("preplay"), then
post-retrieval completion ("replay"). Its search is in search.py, its paths in paths.py."""

from memrag.methods.neuropath.params import NeuroPathParams
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.methods.spec import wing_spec


def judged_per_hop(p: NeuroPathParams) -> int:
    """Judge calls one hop of the likelihood tracker makes at most: one per new listed path, and
    new paths are listed up to prune_top (max_listed without pruning); carried paths are not judged."""
    return min(p.prune_top, p.max_listed) if p.prune_top is not None else p.max_listed


def _stages(p: NeuroPathParams) -> tuple[str, ...]:
    judge = ("neuropath.judge",) * judged_per_hop(p) if p.tracker == "likelihood" else ()
    return ("query.entities",) + (("neuropath.track",) + judge) * p.max_hops


SPEC = wing_spec(
    __name__, detail=NeuroPathDetail, step_style="paths",
    ablation_facts_at="memrag.methods.neuropath.ablations:retrieval_facts",
    changes_at="memrag.methods.neuropath.changes:steps",
    name="neuropath", label="NeuroPath", params=NeuroPathParams,
    expected_stages=_stages,
    # a judge call reads only its path fresh (the instructions and question are a cached prefix)
    stage_tokens={"neuropath.track": (1400.0, 200.0), "neuropath.judge": (40.0, 1.0)},
    # the paper's and the official code's settings (the others are memrag deviations)
    paper_settings={"dp_position": "first", "coref_top": 4, "seed_floor": 0.0, "verbatim_seeds": False,
                    "force_hops": False, "expand_kept": False, "tracker": "generative", "hop_prompt": "paths",
                    "skip_class_words": False, "seed_top": 1},
    start_line=("**NeuroPath** — entities are place cells and triples their place fields: from the question's "
               "entities it plans a route through the graph (preplay), keeps only the paths that serve the "
               "goal, then goes back over them to fill the gaps (replay)."),
    learn_title="NeuroPath · place cells",
)
