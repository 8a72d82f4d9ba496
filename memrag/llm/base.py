"""The LLM protocol every backend implements, and the errors they raise.

Token counts come from the engine, never from text length; an unknown count is
None, not 0. `prompt_tokens` is the whole prompt even when the engine reused a
cached prefix (that part is `prompt_tokens_cached`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]


@dataclass
class Completion:
    text: str
    prompt_tokens: int | None
    prompt_tokens_cached: int | None
    completion_tokens: int | None
    seconds: float
    cached: bool
    model: str
    backend: str = ""
    stage: str = ""
    raw: dict[str, Any] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMError(RuntimeError):
    """Base of every error an LLM backend raises; the message is meant for users."""


class LLMUnavailable(LLMError):
    """The engine cannot be reached (Ollama down, model file missing)."""


class ModelNotFound(LLMError):
    """The engine answers but does not have the model."""


class LLMReplyError(LLMError):
    """The engine's reply broke off or was malformed; nothing is cached.

    `completion` carries what did come back (text and counts), so callers can
    show the raw reply and bill the tokens that were spent.
    """

    def __init__(self, message: str, completion: "Completion | None" = None) -> None:
        super().__init__(message)
        self.completion = completion


@runtime_checkable
class LLM(Protocol):
    backend: str
    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int,
        stage: str,
    ) -> Completion: ...

    def identity(self) -> dict[str, Any]:
        """What makes this engine's replies what they are (for cache keys and stamps)."""
        ...
