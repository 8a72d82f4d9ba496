"""Parameter dataclasses whose fields carry their own help text, and their dict forms.

Shared by the settings (config.py) and every method's parameters (methods/<name>/params.py).
"""

from __future__ import annotations

from dataclasses import asdict, field, fields
from pathlib import Path
from typing import Any


def helped(default: Any, help: str) -> Any:
    """A dataclass field with its help text (shown in the app and the CLI)."""
    return field(default=default, metadata={"help": help})


def help_of(cls: type, name: str) -> str:
    for f in fields(cls):
        if f.name == name:
            return f.metadata.get("help", "")
    raise KeyError(name)


def params_dict(obj: Any) -> dict[str, Any]:
    d = asdict(obj)
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in d.items()}


def from_dict(cls: type, data: dict[str, Any] | None, renamed: dict[str, str] | None = None) -> Any:
    """Build a params dataclass from a dict, refusing unknown keys (no silently ignored parameters).
    `renamed` maps an old key to its new name: files and commands written before a rename still read."""
    data = dict(data or {})
    for old, new in (renamed or {}).items():
        if old in data:
            if new in data:
                raise ValueError(f"{cls.__name__}: both {old!r} (its old name) and {new!r} given")
            data[new] = data.pop(old)
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} parameter(s): {', '.join(unknown)}")
    return cls(**data)
