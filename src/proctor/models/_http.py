"""What the HTTP backends share: endpoint spreading, bounded concurrency, retries, error mapping.

One `HTTPBackend` per model posts JSON to one of several base URLs (the least busy, ties broken round
robin), holds at most `concurrency` requests in flight, and retries with exponential backoff and full
jitter on 429, 5xx, timeouts, connection errors and unreadable bodies, waiting at least as long as a
Retry-After header asks. A request that still fails raises `RequestFailed`; the backends turn that into
a record with `error` set, so one bad request never loses the batch. API keys live only in request
headers: they are never logged, never in `describe()` and never in `repr()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import logging
import os
import random
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar, TypedDict, TypeVar, Unpack

import aiohttp
import yarl

from ..core.model import GenerateRequest, Generation, ModelBase
from ..util import progress
from ..util.errors import MissingKey, ProctorError
from ..util.redact import (
    redact_about,
    redact_secrets,
    redact_text,
    redact_url,
    register_secret,
    split_credentials,
    url_secrets,
)
from ._aimd import AdaptiveLimit
from .replies import InvalidReply

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
            raise ProctorError(f"base URL {redact_url(u)!r} must start with http:// or https://")
        try:
            urllib.parse.urlsplit(u).port  # noqa: B018 - parsing the host and port is the check
        except ValueError as e:
            raise ProctorError(f"base URL {redact_url(u)!r} is not a valid URL: {redact_about(str(e), u)}") from None
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


class HTTPBackend:
    """Posts JSON with retries, bounded concurrency and endpoint spreading, through one aiohttp session.

    The session is made on first use in the running event loop: one keep-alive pool of at most
    `concurrency` connections, shared by every endpoint, TLS verified against the system's CAs, proxies
    taken from the environment (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY) when one is set. Redirects are not
    followed: a reply goes only to the origin the request was sent to, its key included.
    """

    def __init__(self, urls: Sequence[str], headers: dict[str, str], *, concurrency: int,
                 policy: RetryPolicy, seed: int = 0, max_body: int | None = None) -> None:
        if concurrency < 1:
            raise ProctorError(f"concurrency must be at least 1, got {concurrency}")
        self.pool = EndpointPool(urls)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}  # the key: never logged
        self.concurrency = concurrency
        self.limiter = AdaptiveLimit(concurrency)  # backs off on 429s; `limiter.current` for progress bars
        self.policy = policy
        self.stats = CallStats()
        self.max_body = max_body if max_body is not None else max_body_bytes()
        self._rng = random.Random(seed)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"HTTPBackend(urls={[redact_url(u) for u in self.pool.urls]!r}, concurrency={self.concurrency})"

    def _client(self) -> aiohttp.ClientSession:
        """The session of the running loop (a backend used again under a new `asyncio.run` gets a new one)."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            if self._session is not None and not self._session.closed:
                _abandon(self._session)
            self._session = new_session(self.concurrency, self._headers)
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            if self._loop is asyncio.get_running_loop():
                await self._session.close()
            else:
                _abandon(self._session)
        self._session = None

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
        session = self._client()
        progress.in_flight(+1)  # the progress bar shows requests on the wire and requests/s
        i = self.pool.acquire()
        url, shown = _endpoint(self.pool.urls[i], path)  # shown: what messages may say, never a key
        self.stats.attempts += 1
        t0 = time.perf_counter()
        try:
            with failures_as_request_failed(shown, self.policy.timeout):
                async with asyncio.timeout(self.policy.timeout):
                    status, retry_after, content = await self._send(session, url, json.dumps(body).encode())
        finally:
            progress.in_flight(-1)
            progress.report(requests=1)
            self.pool.release(i)
        return _decode(status, retry_after, content, shown), time.perf_counter() - t0

    async def _send(self, session: aiohttp.ClientSession, url: yarl.URL, payload: bytes) -> tuple[int, str | None, bytes]:
        """One POST (the session carries the headers): (status, its Retry-After header, the body up to the cap)."""
        body = aiohttp.payload.BytesPayload(payload, content_type="application/json")  # skips the registry lookup
        async with session.post(url, data=body, allow_redirects=False) as resp:
            return resp.status, resp.headers.get("Retry-After"), await read_capped(resp, self.max_body)


def new_session(connections: int, headers: dict[str, str] | None = None, *, local: bool = False) -> aiohttp.ClientSession:
    """An aiohttp session: a keep-alive pool of `connections`, verified TLS, DNS cached, no cookies, no
    overall timeout (the callers bound each attempt themselves), proxies from the environment when one is
    set (never for a `local` server on this machine)."""
    connector = aiohttp.TCPConnector(limit=connections, limit_per_host=0, ttl_dns_cache=300)
    proxied = not local and any(os.environ.get(v) for v in _PROXY_VARS)
    return aiohttp.ClientSession(connector=connector, headers=headers, timeout=aiohttp.ClientTimeout(total=None),
                                 trust_env=proxied, cookie_jar=aiohttp.DummyCookieJar(), read_bufsize=1 << 16)


async def get_once(url: str, *, headers: dict[str, str] | None = None, timeout: float = 10.0,
                   local: bool = False) -> tuple[int, bytes]:
    """One GET outside any backend's pool (a health check, GET /models): (status, body up to the response
    cap); any failure to get an answer is a `RequestFailed`."""
    with failures_as_request_failed(redact_url(url), timeout):
        async with asyncio.timeout(timeout), new_session(1, headers, local=local) as session, \
                session.get(url, allow_redirects=False) as resp:
            return resp.status, await read_capped(resp, max_body_bytes())


@contextlib.contextmanager
def failures_as_request_failed(shown: str, timeout: float) -> Iterator[None]:
    """What can go wrong getting one answer, as a `RequestFailed` naming `shown` (a redacted URL): a timeout
    (its connection is closed, not pooled: a late reply never lands on another request), a body over the
    cap (not retryable), a transport error."""
    try:
        yield
    except TimeoutError:
        raise RequestFailed(f"timed out after {timeout:g}s at {shown}", retryable=True) from None
    except BodyTooLarge as e:
        raise RequestFailed(f"{e} from {shown}", retryable=False) from None
    except (aiohttp.ClientError, OSError, ValueError) as e:
        raise RequestFailed(f"connection error at {shown}: {type(e).__name__}: {redact_text(str(e))}",
                            retryable=True) from None


async def read_capped(resp: aiohttp.ClientResponse, cap: int) -> bytes:
    """The whole body (decompressed), or BodyTooLarge once it passes `cap` bytes: a declared length over the
    cap is refused before reading, a chunked or read-to-close body is counted as it arrives."""
    declared = resp.content_length
    if declared is not None and declared > cap:
        raise BodyTooLarge(cap)
    if declared is not None and resp.headers.get("Content-Encoding", "identity") == "identity":
        return await resp.read()  # the parser stops at the declared length: it cannot grow past the cap
    chunks: list[bytes] = []
    total = 0
    async for chunk in resp.content.iter_any():
        total += len(chunk)
        if total > cap:
            raise BodyTooLarge(cap)
        chunks.append(chunk)
    return b"".join(chunks)


def _abandon(session: aiohttp.ClientSession) -> None:
    """Drop a session whose event loop has ended: its sockets are closed without awaiting that loop."""
    connector = session.connector
    session.detach()
    if connector is not None:
        connector._close()  # the loop it would await is gone: close the transports now, without it


@functools.lru_cache(maxsize=256)
def _endpoint(base: str, path: str) -> tuple[yarl.URL, str]:
    """The URL a request goes to, parsed once, and how messages show it (redacted)."""
    url = endpoint_url(base, path)
    return yarl.URL(url), redact_url(url)


@functools.lru_cache(maxsize=256)
def endpoint_url(base: str, path: str) -> str:
    """`base` + `path` with the base's query kept after the path (`…/v1?api-version=X` + `/chat/completions`
    is `…/v1/chat/completions?api-version=X`), through yarl's URL model, never string concatenation."""
    u = yarl.URL(base)
    return str(u.with_path(u.path.rstrip("/") + path, keep_query=True))


_PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def _decode(status: int, retry_after: str | None, content: bytes, url: str) -> dict[str, Any]:
    if status >= 300:  # a redirect too: never followed, so the key never leaves the configured origin
        detail = redact_text(content[:300].decode("utf-8", "replace").strip())
        if status < 400:
            detail = f"redirects are not followed (point the base URL at the final address) {detail}".strip()
        raise RequestFailed(
            f"HTTP {status} from {url}: {detail}",
            retryable=status in RETRY_STATUSES or status >= 500,
            status=status,
            retry_after=parse_retry_after(retry_after),
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


async def run_all(items: Sequence[T], one: Callable[[T], Awaitable[R]], on_error: Callable[[str], R]) -> list[R]:
    """Run `one` over every item concurrently (the backend bounds it); a failure becomes `on_error(msg)`."""

    async def guarded(item: T) -> R:
        try:
            return await one(item)
        except (RequestFailed, InvalidReply) as e:
            return on_error(redact_text(str(e)))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as e:
            return on_error(redact_text(f"unexpected response shape: {type(e).__name__}: {e}"[:500]))

    return list(await asyncio.gather(*(guarded(x) for x in items)))


def redacted(g: Generation) -> Generation:
    """No key in a record: error messages quote servers, and a server may echo the key (in any shape)."""
    return replace(g, error=redact_text(g.error) if g.error is not None else None, text=redact_secrets(g.text),
                   reasoning=redact_secrets(g.reasoning) if g.reasoning is not None else None)


async def generate_all(requests: Sequence[GenerateRequest],
                       one: Callable[[GenerateRequest], Awaitable[Generation]]) -> list[Generation]:
    """`run_all` for generation: a failure is an error record, and every reply is `redacted` (a server that
    echoes its request puts the key it was sent into the text)."""
    return [redacted(g) for g in await run_all(requests, one, lambda msg: Generation(error=msg))]


class ClientKeywords(TypedDict, total=False):
    """How an HTTP backend's client sends: requests in flight, seconds per attempt, retries, the first backoff and
    the jitter's seed (the backend's `client_defaults` where not given)."""

    concurrency: int
    timeout: float
    max_retries: int
    backoff_base: float
    seed: int


class HTTPModel(ModelBase):
    """What every HTTP backend shares: spec name, base URLs, headers, retry policy and one `HTTPBackend`.

    A subclass names its `prefix` and where its base URL comes from, builds its headers from the key in
    `_headers`, and adds its own settings to `describe()` through `_described_settings`.
    """

    preferred_chunk_size = 1  # one item per call: each answer is cached and logged the moment it arrives

    prefix: ClassVar[str]  # the spec prefix, e.g. "openai"
    base_url_env: ClassVar[str]
    default_base_url: ClassVar[str]
    api_key_env: ClassVar[str]  # where the key comes from when none is passed, e.g. OPENAI_API_KEY
    client_defaults: ClassVar[ClientKeywords]  # every client setting, where the caller gives none

    def __init__(self, model: str, base_url: str | Sequence[str] | None, *, api_key: str | None,
                 **given: Unpack[ClientKeywords]) -> None:
        client = self.client_defaults | given
        self.model = model
        self.name = f"{self.prefix}:{model}"
        urls, url_key = split_credentials(normalize_base_urls(base_url, self.base_url_env, self.default_base_url))
        if url_key is not None and api_key is not None and url_key != api_key:
            raise ProctorError("a base URL carries a key in its user info and another key was passed: pass one")
        self.base_urls = [redact_url(u) for u in urls]  # what describe(), logs and manifests show
        self._urls = urls  # what requests go to (user info taken out, query kept): never shown
        key = api_key if api_key is not None else url_key
        self._require_key(urls, key)
        headers = self._headers(key)
        self._request_headers = headers  # the key included: for the batch protocols, never shown
        for name, value in headers.items():
            if name.lower() in CREDENTIAL_HEADERS:
                register_secret(value.removeprefix("Bearer "))  # masked wherever a server echoes it back
        for secret in (s for u in urls for s in url_secrets(u)):
            register_secret(secret)  # a key in the base URL's query, the same way
        policy = RetryPolicy(max_retries=client["max_retries"], timeout=client["timeout"],
                             backoff_base=client["backoff_base"])
        self.http = HTTPBackend(urls, headers, concurrency=client["concurrency"], policy=policy, seed=client["seed"])

    def _require_key(self, urls: Sequence[str], key: str | None) -> None:
        """Refuse, before any request, the vendor's own API without a key (a local server may need none)."""
        vendor = self.default_base_url.rstrip("/")
        if key is None and not os.environ.get(self.api_key_env) and vendor in urls:
            raise MissingKey(f"{self.name}: no API key: set {self.api_key_env} (or pass --base-url URL of a "
                             "server that needs none)", self.api_key_env)

    def _headers(self, explicit_key: str | None) -> dict[str, str]:
        """Request headers, the API key (passed in or from the environment) included; never logged."""
        raise NotImplementedError

    def _described_settings(self) -> dict[str, Any]:
        """Backend-specific settings that `describe()` lists after the base URLs."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_urls!r})"

    @property
    def stats(self) -> dict[str, int]:
        return self.http.stats.as_dict()

    @property
    def in_flight_limit(self) -> int:
        """Requests allowed in flight now: `concurrency`, lowered after 429s (models/_aimd.py)."""
        return self.http.limiter.current

    def describe(self) -> dict[str, Any]:
        p = self.http.policy
        return {
            **super().describe(),
            "model": self.model,
            "base_urls": list(self.base_urls),
            **self._described_settings(),
            "concurrency": self.http.concurrency,
            "timeout": p.timeout,
            "max_retries": p.max_retries,
        }

    def identity(self) -> dict[str, Any]:
        """The served model and the settings that change its answers; never URLs, keys or concurrency."""
        return {"spec": self.name, "model": self.model, **self._described_settings()}

    async def aclose(self) -> None:
        await self.http.aclose()
