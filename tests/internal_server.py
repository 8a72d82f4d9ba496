"""A loopback "internal service" for the room-mode probes: every request gets 403 and a body
holding a password, as an admin console on the app's network might. The paths asked are kept."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET_BODY = "internal admin console: db password=hunter2"


class Internal:
    def __init__(self) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer.paths.append(self.path)
                body = SECRET_BODY.encode()
                self.send_response(403)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextlib.contextmanager
def running_internal() -> Iterator[Internal]:
    s = Internal()
    t = threading.Thread(target=s.server.serve_forever, daemon=True)
    t.start()
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()
