"""A tiny hostile HTTP server on 127.0.0.1 for fault tests: it answers every POST with whatever body
(and status, headers) the test sets, counts requests and records the headers and bodies it was sent."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Hostile:
    body: bytes = b"{}"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    declared_length: int | None = None  # Content-Length to claim (None: the true length)
    requests: int = 0
    seen_headers: list[dict[str, str]] = field(default_factory=list)
    seen_bodies: list[bytes] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def chat_body(content: str) -> bytes:
    """A well-formed OpenAI chat completion whose one choice says `content`."""
    return json.dumps({"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}).encode()


@contextmanager
def hostile_server() -> Iterator[Hostile]:
    state = Hostile()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            state.seen_bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            state.requests += 1
            state.seen_headers.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            length = state.declared_length if state.declared_length is not None else len(state.body)
            self.send_header("Content-Length", str(length))
            for k, v in state.headers.items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(state.body[:length])
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
