"""The aiohttp client under `HTTPBackend` (issue 24 item 6): pooled keep-alive connections, no redirect
followed, a decompressed body capped, proxies from the environment, an idle connection the server closed,
one backend across event loops, and `get_once` failures as `RequestFailed`."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from proctor.models._http import HTTPBackend, RequestFailed, RetryPolicy, get_once

OK = json.dumps({"ok": True}).encode()


@dataclass
class Raw:
    """A raw HTTP/1.1 server on 127.0.0.1: `reply(request_head)` gives the bytes to answer each request with;
    it counts connections and records request heads."""

    reply: Callable[[bytes], bytes]
    close_after: bool = False  # close each connection after its answer (without saying so)
    connections: int = 0
    heads: list[bytes] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                self.heads.append(head)
                writer.write(self.reply(head))
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def answer(body: bytes, status: str = "200 OK", *extra: str) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@asynccontextmanager
async def raw_server(reply: Callable[[bytes], bytes], **kw: bool) -> AsyncIterator[Raw]:
    raw = Raw(reply, **kw)
    server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
    raw.port = server.sockets[0].getsockname()[1]
    async with server:
        yield raw


def backend(url: str, concurrency: int = 1, **policy: float) -> HTTPBackend:
    return HTTPBackend([url], {"Authorization": "Bearer k"}, concurrency=concurrency,
                       policy=RetryPolicy(**{"max_retries": 0, "timeout": 5.0, **policy}))  # type: ignore[arg-type]


async def test_requests_share_a_bounded_pool_of_keep_alive_connections() -> None:
    async with raw_server(lambda _: answer(OK)) as srv:
        http = backend(srv.url, concurrency=4)
        for _ in range(3):  # one after another: one connection, kept alive
            assert (await http.post("/x", {}))[0] == {"ok": True}
        assert srv.connections == 1
        await asyncio.gather(*(http.post("/x", {"i": i}) for i in range(40)))
        assert srv.connections <= 4  # never more than `concurrency`
        await http.aclose()
    assert all(b"\r\nauthorization: bearer k\r\n" in h.lower() for h in srv.heads)


async def test_a_redirect_is_not_followed_and_the_key_stays_home() -> None:
    async with raw_server(lambda _: answer(OK)) as elsewhere, \
            raw_server(lambda _: answer(b"", "307 Temporary Redirect", f"Location: {elsewhere.url}/x")) as srv:
        http = backend(srv.url)
        with pytest.raises(RequestFailed, match="HTTP 307 .* redirects are not followed") as e:
            await http.post("/x", {})
        assert not e.value.retryable
        await http.aclose()
    assert elsewhere.heads == []


async def test_a_compressed_body_is_capped_once_decompressed() -> None:
    bomb = gzip.compress(b"[" + b"0," * 50_000 + b"0]")  # 100 kB of JSON in a few hundred bytes
    async with raw_server(lambda _: answer(bomb, "200 OK", "Content-Encoding: gzip")) as srv:
        http = HTTPBackend([srv.url], {}, concurrency=1, policy=RetryPolicy(max_retries=0, timeout=5), max_body=10_000)
        with pytest.raises(RequestFailed, match="larger than 10000 bytes") as e:
            await http.post("/x", {})
        assert not e.value.retryable
        await http.aclose()


async def test_a_small_compressed_body_is_read() -> None:
    async with raw_server(lambda _: answer(gzip.compress(OK), "200 OK", "Content-Encoding: gzip")) as srv:
        http = backend(srv.url)
        assert (await http.post("/x", {}))[0] == {"ok": True}
        await http.aclose()


async def test_an_idle_connection_the_server_closed_costs_no_retry() -> None:
    async with raw_server(lambda _: answer(OK), close_after=True) as srv:
        http = backend(srv.url)
        for _ in range(3):
            await http.post("/x", {})
            await asyncio.sleep(0.05)  # the server has hung up by now: the next request opens a new connection
        assert http.stats.as_dict() == {"requests": 3, "attempts": 3, "retries": 0, "errors": 0}
        assert srv.connections == 3
        await http.aclose()


async def test_requests_go_through_the_proxy_named_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    async with raw_server(lambda _: answer(OK)) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        http = backend("http://api.example.invalid/v1")
        assert (await http.post("/chat/completions", {}))[0] == {"ok": True}
        await http.aclose()
    assert proxy.heads[0].startswith(b"POST http://api.example.invalid/v1/chat/completions HTTP/1.1")


def test_one_backend_serves_one_event_loop_after_another() -> None:
    async def once(http: HTTPBackend) -> None:
        async with raw_server(lambda _: answer(OK)) as srv:
            http.pool.urls = [srv.url]
            assert (await http.post("/x", {}))[0] == {"ok": True}

    http = backend("http://127.0.0.1:9")
    asyncio.run(once(http))
    asyncio.run(once(http))  # the first loop's session is gone with its loop: a new one is made
    asyncio.run(http.aclose())
    assert http.stats.as_dict()["errors"] == 0


async def test_get_once_turns_every_failure_into_request_failed() -> None:
    async with raw_server(lambda _: answer(b'{"version": "1"}')) as srv:
        assert await get_once(srv.url + "/version", local=True) == (200, b'{"version": "1"}')
    with pytest.raises(RequestFailed, match="connection error"):
        await get_once(srv.url + "/version")  # closed now

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    async with server:
        with pytest.raises(RequestFailed, match="timed out after 0.2s"):
            await get_once(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/health", timeout=0.2)
