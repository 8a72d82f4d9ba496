"""The server's long-lived objects, kept out of Python's cyclic garbage collector.

Streamlit collects garbage in full after every script run (each click, each fragment rerun, each
1 s job poll). Once the embedder is loaded the heap holds ~600k tracked objects — torch,
transformers and the model ~400k, the app's imported modules ~180k — and one full pass took
0.5–2 s on this project's two busy cores, during which the server sends nothing: a tab switch whose
own script ran in 13 ms reached the browser a second later (bench/app_bench.py; the real server's
runs timed with `gc.callbacks`). Objects that live as long as the process are moved into the
collector's permanent generation as soon as they exist, so every later pass — Streamlit's and
Python's own — visits only what the runs made since. Objects freed by reference counting are freed
as before; only a reference cycle among the frozen objects would outlive its use, and these live
for the whole process anyway.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_frozen: set[str] = set()


def freeze_long_lived(what: str) -> bool:
    """Collect once, then freeze every object alive now; once per `what` ('app modules',
    'embedder') for the process. Returns whether it froze now."""
    with _lock:
        if what in _frozen:
            return False
        _frozen.add(what)
        gc.collect()  # garbage is freed first: only live objects go to the permanent generation
        gc.freeze()
        return True
