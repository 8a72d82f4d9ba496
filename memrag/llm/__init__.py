"""LLM backends behind one protocol, the response cache, and the auto choice."""

from memrag.llm.base import (  # noqa: F401
    LLM, Completion, LLMError, LLMReplyError, LLMUnavailable, ModelNotFound,
)
from memrag.llm.factory import BackendChoice, choose_backend, make_llm  # noqa: F401
