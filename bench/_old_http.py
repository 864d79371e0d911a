"""The hand-written HTTP/1.1 client proctor used before aiohttp (main before issue 24 item 6), kept only so
`bench/bench_api.py` can set its cost beside aiohttp's in one run. Not part of the package.

What the HTTP backends share: endpoint spreading, bounded concurrency, retries, error mapping.

One `HTTPBackend` per model posts JSON to one of several base URLs (the least busy, ties broken round
robin), holds at most `concurrency` requests in flight, and retries with exponential backoff and full
jitter on 429, 5xx, timeouts, connection errors and unreadable bodies, waiting at least as long as a
Retry-After header asks. A request that still fails raises `RequestFailed`; the backends turn that into
a record with `error` set, so one bad request never loses the batch. API keys live only in request
headers: they are never logged, never in `describe()` and never in `repr()`.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import os
import random
import ssl
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import httpx

from proctor import progress
from proctor.errors import ProctorError
from proctor.models._aimd import AdaptiveLimit
from proctor.redact import redact_text, redact_url

log = logging.getLogger("proctor.models.http")
T = TypeVar("T")
R = TypeVar("R")

# Retries are a plain loop rather than tenacity: tenacity's per-call introspection cost a fifth of the
# client's CPU per request at concurrency 64, and the policy (full-jitter exponential backoff, never
# shorter than Retry-After, capped) fits in `RetryPolicy.wait`.

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key"})  # sent only to the configured origin
MAX_BODY_ENV = "PROCTOR_MAX_RESPONSE_BYTES"
DEFAULT_MAX_BODY = 64 * 1024 * 1024  # a reply larger than this is an error record, not a memory spike


def max_body_bytes() -> int:
    """The response size cap: PROCTOR_MAX_RESPONSE_BYTES when set, else 64 MiB."""
    raw = os.environ.get(MAX_BODY_ENV)
    if not raw:
        return DEFAULT_MAX_BODY
    try:
        value = int(raw)
    except ValueError:
        raise ProctorError(f"{MAX_BODY_ENV}={raw!r}: expected a whole number of bytes") from None
    if value < 1:
        raise ProctorError(f"{MAX_BODY_ENV}={raw!r}: must be at least 1")
    return value


class BodyTooLarge(Exception):
    """A response body went past the configured cap (not retried: it would be as large again)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body larger than {limit} bytes (raise {MAX_BODY_ENV} to accept it)")


class RequestFailed(Exception):
    """One attempt failed; `retryable` says whether another attempt may succeed."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


@dataclass
class CallStats:
    """Counters over a backend's lifetime (benchmarks and tests read them)."""

    requests: int = 0  # logical requests
    attempts: int = 0  # HTTP attempts, retries included
    retries: int = 0
    errors: int = 0  # requests that failed after the last retry

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    timeout: float = 120.0  # seconds per attempt
    backoff_base: float = 0.5  # first backoff ceiling; doubles each retry (full jitter below it)
    backoff_max: float = 30.0
    retry_after_max: float = 120.0  # never wait longer than this, whatever the server asks

    def wait(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        jitter = rng.uniform(0, min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))
        if retry_after is not None:
            return min(self.retry_after_max, max(retry_after, jitter))
        return jitter


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds (fractions accepted) or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def api_key(explicit: str | None, env_var: str) -> str | None:
    """The key passed in, else the environment's; never logged."""
    return explicit if explicit is not None else os.environ.get(env_var) or None


def normalize_base_urls(base_url: str | Sequence[str] | None, env_var: str, default: str) -> list[str]:
    """A list of base URLs from a string (comma-separated allowed), a list, the environment or a default."""
    raw: Sequence[str]
    if base_url is None:
        raw = [os.environ.get(env_var) or default]
    elif isinstance(base_url, str):
        raw = [base_url]
    else:
        raw = list(base_url)
    urls = [u.strip().rstrip("/") for item in raw for u in item.split(",") if u.strip()]
    if not urls:
        raise ProctorError(f"no base URL given (pass one, or set {env_var})")
    for u in urls:
        if not u.startswith(("http://", "https://")):
            raise ProctorError(f"base URL {u!r} must start with http:// or https://")
    return urls


class EndpointPool:
    """Picks the base URL with the fewest requests in flight; ties go round robin."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = list(urls)
        self.in_flight = [0] * len(self.urls)
        self._next = 0

    def acquire(self) -> int:
        n = len(self.urls)
        order = [(self._next + k) % n for k in range(n)]
        best = min(order, key=lambda i: self.in_flight[i])
        self._next = (best + 1) % n
        self.in_flight[best] += 1
        return best

    def release(self, i: int) -> None:
        self.in_flight[i] -= 1


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


class HTTPBackend:
    """Posts JSON with retries, bounded concurrency and endpoint spreading.

    Plain-http endpoints (local servers, fleets on a private network) use a lean built-in HTTP/1.1
    client unless `transport="httpx"` or a proxy is configured in the environment; https endpoints
    use httpx (TLS, proxies). Each concurrency slot owns its connections, so no pool is shared.
    """

    def __init__(self, urls: Sequence[str], headers: dict[str, str], *, concurrency: int,
                 policy: RetryPolicy, seed: int = 0, transport: str = "auto", max_body: int | None = None) -> None:
        if concurrency < 1:
            raise ProctorError(f"concurrency must be at least 1, got {concurrency}")
        if transport not in ("auto", "httpx"):
            raise ProctorError(f"transport must be 'auto' or 'httpx', got {transport!r}")
        self.pool = EndpointPool(urls)
        self._headers = headers  # may hold the API key: kept private, never logged
        self.concurrency = concurrency
        self.limiter = AdaptiveLimit(concurrency)  # backs off on 429s; `limiter.current` for progress bars
        self.policy = policy
        self.stats = CallStats()
        self.max_body = max_body if max_body is not None else max_body_bytes()
        self._rng = random.Random(seed)
        self._lean = transport == "auto" and not any(os.environ.get(v) for v in _PROXY_VARS)
        self._slots: asyncio.Queue[_Slot] | None = None
        self._all: list[_Slot] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"HTTPBackend(urls={[redact_url(u) for u in self.pool.urls]!r}, concurrency={self.concurrency})"

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

    async def post(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """POST `body` to `path` on one of the endpoints, retrying; return (JSON, latency of the last attempt)."""
        self.stats.requests += 1
        attempt = 1
        while True:
            try:
                return await self._limited_attempt(path, body)
            except RequestFailed as e:
                if not e.retryable or attempt > self.policy.max_retries:
                    self.stats.errors += 1
                    raise
                delay = self.policy.wait(attempt, e.retry_after, self._rng)
                log.info("retry %d of %s in %.2fs after: %s", attempt, path, delay, e)
                self.stats.retries += 1
                attempt += 1
                await asyncio.sleep(delay)

    async def _limited_attempt(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """One attempt inside the adaptive in-flight limit (models/_aimd.py): a 429 lowers it, successes
        raise it back; a request waiting to retry holds no place."""
        ticket = await self.limiter.acquire()
        try:
            result = await self._attempt(path, body)
        except RequestFailed as e:
            if e.status == 429:
                self.limiter.throttled(ticket, e.retry_after)
            raise
        finally:
            self.limiter.release()
        self.limiter.succeeded()
        return result

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

    async def _send(self, slot: _Slot, url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
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
    if status >= 400:
        detail = redact_text(content[:300].decode("utf-8", "replace").strip())
        raise RequestFailed(
            f"HTTP {status} from {url}: {detail}",
            retryable=status in RETRY_STATUSES or status >= 500,
            status=status,
            retry_after=parse_retry_after(headers.get("retry-after")),
        )
    try:
        data = json.loads(content)
    except RecursionError:
        raise RequestFailed(f"JSON body from {url} nested too deeply", retryable=False, status=status) from None
    except ValueError as e:  # bad JSON, bad UTF-8, an integer of more than 4300 digits
        raise RequestFailed(f"unreadable JSON body from {url}: {redact_text(str(e))[:120]}", retryable=True,
                            status=status) from None
    if not isinstance(data, dict):
        raise RequestFailed(f"expected a JSON object from {url}, got {type(data).__name__}", retryable=True)
    return data
