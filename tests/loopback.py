"""A threaded HTTP server on 127.0.0.1 (a free port) for the download tests; no other address is used."""

from __future__ import annotations

import http.server
import threading


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = False  # handler threads are joined by server_close(): nothing is left running
    block_on_close = True

    def handle_error(self, request, client_address):  # a client that gave up: not a test failure
        pass


class LoopbackServer:
    """Serves GET requests through ``self.handle(handler)``; subclasses say what to answer."""

    def __init__(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 5
            loopback = owner

            def do_GET(self):
                owner.handle(self)

            def log_message(self, *args):
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="loopback-http")
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def handle(self, handler) -> None:
        raise NotImplementedError

    def close(self):
        self.server.shutdown()
        self.server.server_close()  # joins handler threads
        self.thread.join(5)
