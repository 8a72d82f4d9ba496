"""LLM backends behind one protocol (`base`), the response cache (`cache`) and the
auto choice (`factory.make_llm`)."""

from memrag.llm.base import (  # noqa: F401
    LLM, Completion, LLMBackendError, LLMCallError, LLMError, LLMRefused, LLMReplyError, LLMUnavailable,
    ModelNotFound,
)
