"""One way to run a test's fake HTTP server on 127.0.0.1 for the length of a `with` block."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import HTTPServer


@contextlib.contextmanager
def serving(server: HTTPServer, name: str) -> Iterator[HTTPServer]:
    # A short poll keeps teardown quick (shutdown waits for the next poll).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, name=name, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
