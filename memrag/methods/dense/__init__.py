"""The dense baseline: chunks ranked by cosine to the question. The reference the graph methods
are read against."""

from memrag.methods.dense.params import DenseParams
from memrag.methods.spec import wing_spec

SPEC = wing_spec(
    __name__,
    name="dense", label="Dense", params=DenseParams,
    baseline=True,
    vectors_only=True,
    parts=("deviations",),
)
