"""A plain progress line on stderr (no dependency, safe for pipes)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressLine:
    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        # sys.stderr looked up now, not at import: a redirected stderr (pytest's capture) may be gone by then
        self.label, self.total, self.stream = label, max(total, 0), stream or sys.stderr
        self.start = time.perf_counter()
        self.done = 0

    def update(self, done: int, note: str = "") -> None:
        self.done = done
        elapsed = time.perf_counter() - self.start
        eta = ""
        if 0 < done < self.total:
            eta = f" ETA {elapsed / done * (self.total - done):.0f}s"
        width = 24
        filled = int(width * done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{self.total}{eta} {note[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
