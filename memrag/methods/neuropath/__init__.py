"""NeuroPath (place cells): goal-directed path tracking over triples ("preplay"), then
post-retrieval completion ("replay"). Its search is in search.py, its paths in paths.py."""

from memrag.methods.neuropath.params import NeuroPathParams
from memrag.methods.spec import wing_spec


def _stages(p: NeuroPathParams) -> tuple[str, ...]:
    return ("query.entities",) + ("neuropath.track",) * p.max_hops


SPEC = wing_spec(
    __name__,
    name="neuropath", label="NeuroPath", params=NeuroPathParams,
    renderer_at="memrag.viz.trace_graphs:neuropath_overview",
    expected_stages=_stages,
    stage_tokens={"neuropath.track": (1400.0, 200.0)},
    # the paper's and the official code's settings (the others are memrag deviations)
    paper_settings={"dp_position": "first", "coref_top": 4, "seed_floor": 0.0, "verbatim_seeds": False,
                    "force_hops": False},
    start_line=("**NeuroPath** — entities are place cells and triples their place fields: from the question's "
               "entities it plans a route through the graph (preplay), keeps only the paths that serve the "
               "goal, then goes back over them to fill the gaps (replay)."),
    learn_title="NeuroPath · place cells",
)
