"""EcphoryRAG (engrams): cues activate entity memory traces, associative rounds spread the
activation, a re-rank keeps the strongest. Its search is in search.py."""

from memrag.methods.ecphory.params import EcphoryParams
from memrag.methods.ecphory.detail import EcphoryDetail
from memrag.methods.spec import wing_spec


def _stages(p: EcphoryParams) -> tuple[str, ...]:
    return ("query.entities",)


def _context_size(p: EcphoryParams) -> int:
    return p.context_chunks  # the paper's name for what the others call answer_passages


SPEC = wing_spec(
    __name__, detail=EcphoryDetail, step_style="rounds",
    ablation_facts_at="memrag.methods.ecphory.ablations:retrieval_facts",
    changes_at="memrag.methods.ecphory.changes:steps",
    name="ecphory", label="EcphoryRAG", params=EcphoryParams,
    expected_stages=_stages,
    context_size=_context_size,
    renamed={"depth": "rounds"},  # its name until the rename: older files and commands still read
    paper_settings={"seed_policy": "paper", "context_source": "c_init", "cue_k": 0, "answer_facts": 20},
    start_line=("**EcphoryRAG** — every mention of an entity is an engram: the question's cues activate some, "
               "activation spreads to associated engrams, and the ones that light up most are re-ranked into "
               "the memory recalled."),
    learn_title="EcphoryRAG · ecphory",
)
