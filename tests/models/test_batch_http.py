"""Batch downloads and credentials (issue 22, items 3, 6 and 8): results files streamed under a byte cap
and a deadline, the API key sent only to the configured origin, the base URL's user info and query kept,
and a key a server echoes back masked whatever its shape."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yarl

from proctor.models import GenerateRequest, GenerationSettings, Message
from proctor.models._http import RetryPolicy, endpoint_url
from proctor.models.batch_anthropic import AnthropicBatchModel
from proctor.models.batch_http import BatchHTTP, join_url
from proctor.models.batch_openai import OpenAIBatchModel
from proctor.testing import LocalServer
from proctor.testing.batches import configure_batches
from proctor.util.errors import ProctorError

pytest.importorskip("uvicorn")

SRC = str(Path(__file__).resolve().parents[2] / "src")
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=64)
RIGHT = "The answer is (A)"


def questions(n: int) -> list[GenerateRequest]:
    return [GenerateRequest((Message("user", f"D{i}: which?\n(A) x\n(B) y"),), SETTINGS) for i in range(n)]


@pytest.fixture
def server(batch_server: LocalServer) -> LocalServer:
    return batch_server


class Recorder:
    """A second origin: records each request's line and headers and forwards it, credentials stripped, to
    the test server (so a batch's results still come back through it)."""

    def __init__(self, target: str, *, redirect: bool = False) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def forward(self) -> None:
                recorder.seen.append((f"{self.command} {self.path}", {k.lower(): v for k, v in self.headers.items()}))
                if redirect:  # send the client on to `target` itself
                    self.send_response(302)
                    self.send_header("location", target + self.path)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                keep = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "anthropic-version")}
                resp = httpx.request(self.command, target + self.path, content=body, headers=keep, timeout=30)
                self.send_response(resp.status_code)
                self.send_header("content-type", resp.headers.get("content-type", "application/json"))
                self.send_header("content-length", str(len(resp.content)))
                self.end_headers()
                self.wfile.write(resp.content)

            do_GET = do_POST = forward

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorder(server: LocalServer) -> Iterator[Recorder]:
    r = Recorder(server.url)
    yield r
    r.close()


def openai(srv: LocalServer, d: Path, **kw: Any) -> OpenAIBatchModel:
    kw = {"base_url": srv.base_url, "state_dir": d, "poll_interval": 0.01, "backoff_base": 0.01, "max_retries": 1} | kw
    return OpenAIBatchModel("gpt-test", **kw)


# -- bounded downloads (item 3) ----------------------------------------------------------------------


async def test_a_results_file_over_the_cap_is_a_clear_error(server: LocalServer, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_MAX_BATCH_BYTES", "100000")
    configure_batches(server.url, pad_bytes=1_000_000)
    gens = await openai(server, tmp_path).generate(questions(2))
    assert all("answer larger than 100000 bytes (raise PROCTOR_MAX_BATCH_BYTES to accept it)" in (g.error or "")
               and "run again" in (g.error or "") for g in gens)
    configure_batches(server.url)
    gens = await openai(server, tmp_path).generate(questions(2))  # the next run reads them again
    assert [g.text for g in gens] == [RIGHT, RIGHT]


async def test_a_trickling_results_file_times_out_at_the_deadline(server: LocalServer, tmp_path: Path) -> None:
    configure_batches(server.url, trickle=0.05)  # about 20 bytes a second: minutes for the whole file
    t0 = time.monotonic()
    gens = await openai(server, tmp_path, timeout=1.0).generate(questions(2))
    assert time.monotonic() - t0 < 8
    assert all("no complete answer within --timeout 1s" in (g.error or "") for g in gens)


PEAK = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {src!r})
    from proctor.models import GenerateRequest, GenerationSettings, Message
    from proctor.models.batch_openai import OpenAIBatchModel
    reqs = [GenerateRequest((Message("user", f"R{{i}}"),), GenerationSettings(max_tokens=8)) for i in range(3)]
    model = OpenAIBatchModel("gpt-test", base_url={url!r}, state_dir={d!r}, poll_interval=0.01)
    gens = asyncio.run(model.generate(reqs))
    assert [g.error for g in gens] == [None] * 3, gens
    # VmHWM is this process's own peak (ru_maxrss would carry the forking pytest's across exec)
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    print(int(status.split()[0]) // 1024)
""")


def test_a_300_mb_results_file_is_streamed_not_held(server: LocalServer, tmp_path: Path) -> None:
    """The results come through and the 300 MB line is passed over; peak memory stays far below its size."""
    configure_batches(server.url, pad_bytes=300 * 1024 * 1024)
    code = PEAK.format(src=SRC, url=server.base_url, d=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PROCTOR_MAX_RESPONSE_BYTES": "1000000"})
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout.split()[-1])
    assert peak_mb < 250, f"peak RSS {peak_mb} MB for a 300 MB results file"


# -- credentials only to the configured origin (item 6) ------------------------------------------------


async def test_results_on_another_origin_get_no_api_key(server: LocalServer, recorder: Recorder,
                                                        tmp_path: Path) -> None:
    configure_batches(server.url, results_origin=recorder.url)
    model = AnthropicBatchModel("claude-test", base_url=server.url, state_dir=tmp_path, poll_interval=0.01,
                                api_key="sk-ant-never-leaves-its-origin")
    gens = await model.generate(questions(2))
    assert [g.text for g in gens] == [RIGHT, RIGHT]
    [(line, headers)] = recorder.seen
    assert line.startswith("GET /v1/messages/batches/") and line.endswith("/results")
    assert "x-api-key" not in headers and "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"


async def test_a_redirect_is_followed_without_the_api_key(server: LocalServer, recorder: Recorder,
                                                          tmp_path: Path) -> None:
    hop = Recorder(recorder.url, redirect=True)  # results_url -> hop (302) -> recorder -> the server
    try:
        configure_batches(server.url, results_origin=hop.url)
        model = AnthropicBatchModel("claude-test", base_url=server.url, state_dir=tmp_path, poll_interval=0.01,
                                    api_key="sk-ant-never-leaves-its-origin")
        gens = await model.generate(questions(2))
    finally:
        hop.close()
    assert [g.text for g in gens] == [RIGHT, RIGHT]
    assert len(hop.seen) == len(recorder.seen) == 1
    assert all("x-api-key" not in headers for _, headers in hop.seen + recorder.seen)


def test_credentials_follow_the_origin_only() -> None:
    http = BatchHTTP("https://api.example.com/v1", {"anthropic-version": "v"}, RetryPolicy(),
                     credentials={"x-api-key": "k"})
    assert http._request_headers(yarl.URL("https://api.example.com:443/v1/x")) == {"anthropic-version": "v",
                                                                                    "x-api-key": "k"}
    for elsewhere in ("http://api.example.com/v1/x", "https://api.example.com:8443/x", "https://cdn.example.com/x",
                      "https://api.example.com.evil.test/x"):
        assert http._request_headers(yarl.URL(elsewhere)) == {"anthropic-version": "v"}, elsewhere


# -- base URL forms and echoed keys (item 8) -----------------------------------------------------------


def test_urls_are_joined_with_the_query_kept() -> None:
    assert endpoint_url("http://h:1/v1?api-version=X", "/chat/completions") == \
        "http://h:1/v1/chat/completions?api-version=X"
    assert str(join_url("http://h:1/v1/?api-version=X", "/batches", {"limit": 100})) == \
        "http://h:1/v1/batches?api-version=X&limit=100"
    assert str(join_url("http://h:1/v1?api-version=X", "https://files.example/r?sig=1")) == "https://files.example/r?sig=1"
    for odd in ("file:///etc/passwd", "//evil.test/x", "ftp://x/y", "relative"):
        with pytest.raises(ProctorError, match="neither an http"):
            join_url("http://h:1/v1", odd)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_key_in_the_base_urls_user_info_is_sent(server: LocalServer, provider: str, tmp_path: Path) -> None:
    server.configure(api_key="userinfo-key-123456")
    base = (server.base_url if provider == "openai" else server.url).replace("://", "://userinfo-key-123456@")
    cls = OpenAIBatchModel if provider == "openai" else AnthropicBatchModel
    model = cls("m", base_url=base, state_dir=tmp_path, poll_interval=0.01, api_key=None)
    gens = await model.generate(questions(2))
    assert [g.error for g in gens] == [None, None]
    assert "userinfo-key" not in json.dumps(model.describe())


def seen(srv: LocalServer) -> list[str]:
    found: list[str] = httpx.get(f"{srv.url}/stats/batches", timeout=10).json()["seen"]
    return found


async def test_a_base_url_query_is_kept_on_every_batch_endpoint(server: LocalServer, tmp_path: Path) -> None:
    start = len(await asyncio.to_thread(seen, server))
    gens = await openai(server, tmp_path, base_url=server.base_url + "?api-version=2024-10-21").generate(questions(2))
    assert [g.text for g in gens] == [RIGHT, RIGHT]
    lines = (await asyncio.to_thread(seen, server))[start:]
    endpoints = {f"{m} {'/'.join(p.split('?')[0].split('/')[:3])}" for m, p in (s.split(" ", 1) for s in lines)}
    assert {"POST /v1/files", "POST /v1/batches", "GET /v1/batches", "GET /v1/files"} <= endpoints, lines
    assert all("api-version=2024-10-21" in s for s in lines), lines


async def test_the_chat_path_keeps_the_query_too(server: LocalServer, recorder: Recorder) -> None:
    from proctor.models.openai import OpenAIModel

    model = OpenAIModel("gpt-test", base_url=f"{recorder.url}/v1?api-version=X", max_retries=0)
    [gen] = await model.generate(questions(1))
    await model.aclose()
    assert gen.error is None and gen.text == RIGHT
    assert [line for line, _ in recorder.seen] == ["POST /v1/chat/completions?api-version=X"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_an_echoed_key_of_any_shape_is_masked(server: LocalServer, provider: str, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    server.configure(api_key="the-right-key")
    configure_batches(server.url, echo_key=True)
    cls = OpenAIBatchModel if provider == "openai" else AnthropicBatchModel
    base = server.base_url if provider == "openai" else server.url
    model = cls("m", base_url=base, state_dir=tmp_path, poll_interval=0.01, api_key="opaque.KEY.987654",
                max_retries=0)
    gens = await model.generate(questions(2))
    assert all("401" in (g.error or "") and "invalid API key: ***" in (g.error or "") for g in gens)
    assert "opaque.KEY.987654" not in json.dumps([g.error for g in gens]) + caplog.text
