"""The HTTP client of proctor's main before issue 24 item 6, kept only so `bench/bench_api.py` can set
aiohttp's cost beside it in one run; not part of the package. `HTTPBackend(transport="auto")` is the
hand-written HTTP/1.1 keep-alive client over asyncio streams, `transport="httpx"` httpx. What did not change
(retry policy, endpoint pool, error types, body cap) is imported from `proctor.models._http`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import ssl
import time
import urllib.parse
from collections.abc import Sequence
from typing import Any

import httpx

from proctor.models import _http
from proctor.models._http import (
    DEFAULT_MAX_BODY,
    BodyTooLarge,
    RequestFailed,
    RetryPolicy,
)
from proctor.util import progress
from proctor.util.errors import ProctorError
from proctor.util.redact import redact_text, redact_url

log = logging.getLogger("proctor.models.http")


class _Connection:
    """One keep-alive HTTP/1.1 connection over asyncio streams, for plain-http endpoints.

    httpx costs about 2 ms of CPU per request; this costs about 0.2 ms, which is what lets one
    process keep a fleet of local vLLM servers busy at concurrency 64 and more. Responses with a
    Content-Length, chunked bodies and read-to-close bodies are understood.
    """

    def __init__(self, host: str, port: int, max_body: int = DEFAULT_MAX_BODY) -> None:
        self.host, self.port = host, port
        self.max_body = max_body
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def post(self, target: str, payload: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        reused = self.writer is not None
        try:
            return await self._exchange(target, payload, headers)
        except (ConnectionError, asyncio.IncompleteReadError) as e:
            self.close()
            if reused and not (isinstance(e, asyncio.IncompleteReadError) and e.partial):
                return await self._exchange(target, payload, headers)  # the server closed an idle connection
            raise

    async def _exchange(self, target: str, payload: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = [f"POST {target} HTTP/1.1", f"Host: {self.host}:{self.port}", "Content-Type: application/json",
                f"Content-Length: {len(payload)}", "Accept: application/json"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            raise ConnectionError(f"bad HTTP status line {lines[0][:60]!r}")
        status = int(parts[1])
        got: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                got[k.strip().lower()] = v.strip()
        try:
            content = await self._read_body(got)
        except BodyTooLarge:
            self.close()  # the rest of the body is never read: the connection cannot be reused
            raise
        if got.get("connection", "").lower() == "close":
            self.close()
        return status, got, content

    async def _read_body(self, got: dict[str, str]) -> bytes:
        assert self.reader is not None
        if "content-length" in got:
            length = int(got["content-length"])
            if length > self.max_body:
                raise BodyTooLarge(self.max_body)
            return await self.reader.readexactly(length)
        if "chunked" in got.get("transfer-encoding", "").lower():
            return await self._read_chunked()
        got["connection"] = "close"
        content = await self.reader.read(self.max_body + 1)
        while content and len(content) <= self.max_body:
            more = await self.reader.read(self.max_body + 1 - len(content))
            if not more:
                break
            content += more
        if len(content) > self.max_body:
            raise BodyTooLarge(self.max_body)
        return content

    async def _read_chunked(self) -> bytes:
        assert self.reader is not None
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")  # no trailers expected
                return b"".join(chunks)
            total += size
            if total > self.max_body:
                raise BodyTooLarge(self.max_body)
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


class _Slot:
    """One unit of concurrency: its own connections, made on first use."""

    def __init__(self) -> None:
        self.client: httpx.AsyncClient | None = None
        self.conns: dict[tuple[str, int], _Connection] = {}

    async def aclose(self) -> None:
        for conn in self.conns.values():
            conn.close()
        if self.client is not None:
            await self.client.aclose()


class HTTPBackend(_http.HTTPBackend):
    """main's backend: the same retries, in-flight limit and endpoint pool (inherited), its own transport.

    Plain-http endpoints (local servers, fleets on a private network) use a lean built-in HTTP/1.1
    client unless `transport="httpx"` or a proxy is configured in the environment; https endpoints
    use httpx (TLS, proxies). Each concurrency slot owns its connections, so no pool is shared.
    """

    def __init__(self, urls: Sequence[str], headers: dict[str, str], *, concurrency: int,
                 policy: RetryPolicy, seed: int = 0, transport: str = "auto", max_body: int | None = None) -> None:
        if transport not in ("auto", "httpx"):
            raise ProctorError(f"transport must be 'auto' or 'httpx', got {transport!r}")
        super().__init__(urls, headers, concurrency=concurrency, policy=policy, seed=seed, max_body=max_body)
        self._headers = headers  # may hold the API key: kept private, never logged
        self._lean = transport == "auto" and not any(os.environ.get(v) for v in _PROXY_VARS)
        self._slots: asyncio.Queue[_Slot] | None = None
        self._all: list[_Slot] = []

    def _queue(self) -> asyncio.Queue[_Slot]:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._all = [_Slot() for _ in range(self.concurrency)]
            self._slots = asyncio.Queue()
            for slot in self._all:
                self._slots.put_nowait(slot)
            self._loop = loop
        return self._slots

    async def aclose(self) -> None:
        for slot in self._all:
            await slot.aclose()
        self._all, self._slots = [], None

    async def _attempt(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        slots = self._queue()
        slot = await slots.get()
        progress.in_flight(+1)  # the progress bar shows requests on the wire and requests/s
        i = self.pool.acquire()
        url = endpoint_url(self.pool.urls[i], path)
        shown = redact_url(url)  # what messages may say: never a key
        self.stats.attempts += 1
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(self.policy.timeout):
                status, headers, content = await self._send(slot, url, body)
        except TimeoutError:
            for conn in slot.conns.values():
                conn.close()  # a response may still arrive on it: never reuse
            raise RequestFailed(f"timed out after {self.policy.timeout:g}s at {shown}", retryable=True) from None
        except BodyTooLarge as e:
            raise RequestFailed(f"{e} from {shown}", retryable=False) from None
        except (httpx.TransportError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError) as e:
            raise RequestFailed(f"connection error at {shown}: {type(e).__name__}: {redact_text(str(e))}",
                                retryable=True) from None
        finally:
            progress.in_flight(-1)
            progress.report(requests=1)
            self.pool.release(i)
            slots.put_nowait(slot)
        return _decode(status, headers, content, shown), time.perf_counter() - t0

    async def _send(self, slot: _Slot, url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:  # type: ignore[override]
        payload = json.dumps(body).encode()
        parsed = urllib.parse.urlsplit(url)
        if self._lean and parsed.scheme == "http":
            origin = (parsed.hostname or "localhost", parsed.port or 80)
            conn = slot.conns.get(origin)
            if conn is None:
                conn = slot.conns[origin] = _Connection(*origin, max_body=self.max_body)
            target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            return await conn.post(target, payload, self._headers)
        if slot.client is None:
            n = len(self.pool.urls)
            slot.client = httpx.AsyncClient(headers=self._headers, verify=_ssl_context(), timeout=None,
                                            limits=httpx.Limits(max_connections=n, max_keepalive_connections=n))
        async with slot.client.stream("POST", url, content=payload,
                                      headers={"Content-Type": "application/json"}) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_body:
                raise BodyTooLarge(self.max_body)
            chunks: list[bytes] = []
            total = 0
            async for chunk in resp.aiter_bytes():
                total += len(chunk)
                if total > self.max_body:
                    raise BodyTooLarge(self.max_body)
                chunks.append(chunk)
            return resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, b"".join(chunks)


@functools.lru_cache(maxsize=256)
def endpoint_url(base: str, path: str) -> str:
    """`base` + `path` with the base's query kept after the path (`…/v1?api-version=X` + `/chat/completions`
    is `…/v1/chat/completions?api-version=X`), through httpx's URL model, never string concatenation."""
    u = httpx.URL(base)
    return str(u.copy_with(path=u.path.rstrip("/") + path))


_PROXY_VARS = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verified TLS context for every client (loading CA certificates is slow)."""
    return httpx.create_ssl_context()


def _decode(status: int, headers: dict[str, str], content: bytes, url: str) -> dict[str, Any]:
    return _http._decode(status, headers.get("retry-after"), content, url)
