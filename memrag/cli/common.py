"""What every subcommand shares: the backend flags and the Settings they make."""

from __future__ import annotations

import argparse
import sys

from memrag.config import Settings
from memrag.llm.egress import key_for_server


def settings_from(args: argparse.Namespace) -> Settings:
    s = Settings()
    if getattr(args, "backend", None):
        s.backend = args.backend
    if getattr(args, "model", None):
        s.ollama_model = s.openai_model = args.model  # each backend reads its own
    if getattr(args, "base_url", None):
        s.openai_base_url = args.base_url
        s.openai_api_key, withheld = key_for_server(s.openai_base_url, s.openai_api_key)
        if withheld:
            print(withheld, file=sys.stderr)
    if getattr(args, "parallel", None):
        s.extract_parallel = args.parallel
    if getattr(args, "embedder", None):
        s.embedder = args.embedder
    if getattr(args, "no_cache", False):
        s.response_cache = False
    s.check()  # SettingsError naming every bad variable; `main` prints it
    return s


def add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["auto", "ollama", "embedded", "openai"],
                   help="LLM backend (default auto; openai when MEMRAG_OPENAI_BASE_URL is set)")
    p.add_argument("--model", help="Ollama model (default phi4), or the OpenAI-compatible server's model")
    p.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
                                      "(MEMRAG_OPENAI_BASE_URL; the key comes from OPENAI_API_KEY)")
    p.add_argument("--parallel", type=_positive_int, metavar="N",
                   help="extraction requests in flight with Ollama or an OpenAI-compatible server (default 4)")
    p.add_argument("--embedder", help="all-MiniLM-L6-v2 (default), ollama:MODEL or openai:MODEL (MEMRAG_EMBEDDER)")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def json_params(text: str) -> dict:
    """`--params` as JSON, every shape and value checked by the one validator (registry.params_map);
    a ValueError that says it is about --params."""
    from memrag import jsonsafe
    from memrag.methods import registry

    try:
        params = jsonsafe.loads(text)
    except ValueError as e:
        raise ValueError(f"--params is not JSON ({e})") from None
    try:
        registry.params_map(params)
    except ValueError as e:
        raise ValueError(f"--params: {e}") from None
    return params
