"""HippoRAG 2 (the hippocampal index): facts linked to the question, recognition memory keeps the
relevant ones, Personalised PageRank over phrases and passages ranks the passages."""

from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.spec import wing_spec


def _stages(p: HippoRAG2Params) -> tuple[str, ...]:
    return ("hipporag2.recognition",) if p.recognition else ()


SPEC = wing_spec(
    __name__, detail=HippoRAG2Detail, step_style="pagerank",
    ablation_facts_at="memrag.methods.hipporag2.ablations:retrieval_facts",
    changes_at="memrag.methods.hipporag2.changes:steps",
    name="hipporag2", label="HippoRAG 2", params=HippoRAG2Params,
    expected_stages=_stages,
    stage_tokens={"hipporag2.recognition": (500.0, 40.0)},
    paper_settings={},  # its defaults are the paper's settings (linking_top_k 5, damping 0.5, weight 0.05)
    start_line=("**HippoRAG 2** — the graph plays the hippocampal index beside the language model's "
               "neocortex: the question's entities and passages seed a personalized PageRank walk, the index "
               "completing the pattern from a partial cue."),
    learn_title="HippoRAG 2 · hippocampal index",
)
