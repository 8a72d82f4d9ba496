"""What every subcommand shares: the backend flags and the Settings they make."""

from __future__ import annotations

import argparse

from memrag.config import Settings


def settings_from(args: argparse.Namespace) -> Settings:
    s = Settings()
    if getattr(args, "backend", None):
        s.backend = args.backend
    if getattr(args, "model", None):
        s.ollama_model = args.model
    if getattr(args, "no_cache", False):
        s.response_cache = False
    return s


def add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["auto", "ollama", "embedded"], help="LLM backend (default auto)")
    p.add_argument("--model", help="Ollama model (default phi4)")
