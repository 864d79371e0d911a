"""The HTTP side of the provider batch APIs: bounded requests, bounded downloads, typed replies.

Every reply is read as a stream, capped (`PROCTOR_MAX_RESPONSE_BYTES` for a status or submit reply and
for one line of a results file, `PROCTOR_MAX_BATCH_BYTES` for a whole results file) and bounded in time
(`--timeout` is the deadline of a whole request or download, so a trickling server cannot outlive it). A
results file goes to a temporary file on disk, never whole into memory, and is read line by line.

Credentials go only to the configured origin (scheme, host and port of the base URL): a results URL on
another origin is fetched without them. Replies are parsed with pydantic models (`parse_reply`): lenient
where the providers are, strict on the fields proctor relies on; a reply of another shape is one clear
`ProctorError`, never a traceback.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Annotated, Any, TypeVar

import aiohttp
import yarl
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from ..util.errors import ProctorError, first_problem
from ..util.limits import _env_int
from ..util.redact import redact_text, redact_url
from ._http import RETRY_STATUSES, RequestFailed, RetryPolicy, max_body_bytes, new_session, parse_retry_after

log = logging.getLogger("proctor.models.batch")

MAX_BATCH_ENV = "PROCTOR_MAX_BATCH_BYTES"
DEFAULT_MAX_BATCH = 4 * 1024**3  # a whole results file (on disk, not in memory); one line is capped like a reply
CHUNK = 1 << 16
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
Form = Mapping[str, "str | tuple[str, bytes, str]"]  # a multipart form: a field's value, or (file name, bytes, type)

Id = Annotated[str, StringConstraints(min_length=1, max_length=512)]
M = TypeVar("M", bound=BaseModel)


class Lenient(BaseModel):
    """A provider reply: fields proctor does not use are ignored, whatever their shape."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def parse_reply(model: type[M], data: object, what: str) -> M:
    """`data` as `model`, or a ProctorError naming the first field of the wrong shape."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ProctorError(f"batch API: {what} answered an unexpected shape ({shape_problem(e)})") from None


def parse_status(model: type[M], data: object, what: str, status: str) -> M:
    """A status reply as `model`: as `parse_reply`, and its `status` field must be there (a create reply
    may lack it: the batch is recorded all the same)."""
    reply = parse_reply(model, data, what)
    if getattr(reply, status) is None:
        raise ProctorError(f"batch API: {what} answered an unexpected shape ({status}: Field required)")
    return reply


def shape_problem(e: ValidationError) -> str:
    """The first problem of a validation error, short: `id: Field required`."""
    where, message, _ = first_problem(e)
    return f"{where or 'the reply'}: {message}"[:200]


def max_batch_bytes() -> int:
    """The results-file cap: PROCTOR_MAX_BATCH_BYTES when set, else 4 GiB."""
    return _env_int(MAX_BATCH_ENV, DEFAULT_MAX_BATCH)


def join_url(base: str, path_or_url: str, params: Mapping[str, Any] | None = None) -> yarl.URL:
    """`base` + `path` (its query kept: `…/v1?api-version=X` + `/files` is `…/v1/files?api-version=X`), with
    `params` merged in; an absolute http(s) URL is taken as it is (sent verbatim: a signed URL stays valid),
    anything else (`file:`, `//host`) refused."""
    if path_or_url.startswith(("http://", "https://")):
        url = yarl.URL(path_or_url, encoded=True)
    elif not path_or_url.startswith("/") or path_or_url.startswith("//"):
        raise ProctorError(f"batch API: {redact_url(path_or_url)[:200]!r} is neither an http(s) URL nor a path")
    else:
        b = yarl.URL(base)
        url = b.with_path(b.path.rstrip("/") + path_or_url, keep_query=True)
    return url.update_query(dict(params)) if params else url


def origin(url: yarl.URL) -> tuple[str, str | None, int | None]:
    """Scheme, host and port (the default port spelled out): where credentials may go."""
    return url.scheme, url.host, url.port


@dataclass(frozen=True)
class Line:
    """One line of a results file: its JSON value, or why it has none."""

    number: int
    value: Any = None
    problem: str | None = None
    custom_id: str | None = None  # of a broken line, when it can still be read: its error lands on its request


class BatchHTTP:
    """The few HTTP calls a batch protocol makes, retried on 429 / 5xx / connection errors."""

    def __init__(self, base_url: str, headers: dict[str, str], policy: RetryPolicy, seed: int = 0, *,
                 credentials: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = headers  # sent with every request
        self._credentials = credentials or {}  # the API key: sent only to the base URL's origin, never logged
        self.policy = policy
        self._rng = random.Random(seed)

    async def json(self, method: str, path_or_url: str, *, body: Any = None, form: Form | None = None,
                   params: Mapping[str, Any] | None = None) -> Any:
        """The JSON value of a reply (at most PROCTOR_MAX_RESPONSE_BYTES) to a request carrying `body` as JSON,
        or `form` as multipart/form-data, with `params` added to the URL's query."""
        with io.BytesIO() as f:  # at most PROCTOR_MAX_RESPONSE_BYTES: memory is fine
            await self._retried(method, join_url(self.base_url, path_or_url, params), f, max_body_bytes(),
                                body=body, form=form)
            f.seek(0)
            try:
                return json.load(f)
            except RecursionError:
                raise ProctorError(f"batch API: {method} {self._shown(path_or_url)} answered JSON nested too "
                                   "deeply") from None
            except ValueError:
                raise ProctorError(f"batch API: {method} {self._shown(path_or_url)} answered with unreadable "
                                   "JSON") from None

    async def download(self, path_or_url: str) -> IO[bytes]:
        """A results file, in a temporary file (the caller closes it), at most PROCTOR_MAX_BATCH_BYTES."""
        f = tempfile.TemporaryFile()  # noqa: SIM115 - handed to the caller, who closes it
        try:
            await self._retried("GET", join_url(self.base_url, path_or_url), f, max_batch_bytes(), cap_env=MAX_BATCH_ENV)
        except BaseException:
            f.close()
            raise
        f.seek(0)
        return f

    async def _retried(self, method: str, url: yarl.URL, sink: IO[bytes], cap: int, *,
                       cap_env: str = "PROCTOR_MAX_RESPONSE_BYTES", **kw: Any) -> None:
        attempt = 1
        while True:
            sink.seek(0)
            sink.truncate()
            try:
                return await self._once(method, url, sink, cap, cap_env, **kw)
            except RequestFailed as e:
                if not e.retryable or attempt > self.policy.max_retries:
                    raise ProctorError(f"batch API: {e}") from None
                await asyncio.sleep(self.policy.wait(attempt, e.retry_after, self._rng))
                attempt += 1

    def _request_headers(self, url: yarl.URL) -> dict[str, str]:
        if origin(url) == origin(yarl.URL(self.base_url)):
            return {**self._headers, **self._credentials}
        if self._credentials:
            log.info("%s is not on the configured origin: fetched without the API key", redact_url(str(url)))
        return dict(self._headers)

    def _shown(self, path_or_url: str) -> str:
        return redact_text(redact_url(str(join_url(self.base_url, path_or_url))))

    async def _once(self, method: str, url: yarl.URL, sink: IO[bytes], cap: int, cap_env: str, **kw: Any) -> None:
        """One attempt, redirects of a GET included (each hop gets credentials only on the configured origin),
        all within the --timeout deadline."""
        shown = redact_url(str(url))
        try:
            async with asyncio.timeout(self.policy.timeout):
                for _ in range(MAX_REDIRECTS + 1):
                    following = await self._exchange(method, url, sink, cap, cap_env, **kw)
                    if following is None:
                        return
                    url = following
                raise RequestFailed(f"{method} {shown}: more than {MAX_REDIRECTS} redirects", retryable=False)
        except TimeoutError:
            raise RequestFailed(f"{method} {shown}: no complete answer within --timeout {self.policy.timeout:g}s",
                                retryable=False) from None
        except (aiohttp.ClientError, OSError, ValueError) as e:
            raise RequestFailed(f"{method} {shown}: {type(e).__name__}: {redact_text(str(e))}",
                                retryable=True) from None

    async def _exchange(self, method: str, url: yarl.URL, sink: IO[bytes], cap: int, cap_env: str, *,
                        body: Any = None, form: Form | None = None) -> yarl.URL | None:
        """Send one request; the body goes to `sink`, or the redirect's target comes back."""
        data = _form_data(form) if form is not None else None
        async with new_session(1, self._request_headers(url)) as session, \
                session.request(method, url, json=body, data=data, allow_redirects=False) as resp:
            shown = redact_url(str(url))
            location = resp.headers.get("Location")
            if resp.status in REDIRECT_STATUSES and method == "GET" and location:
                return url.join(yarl.URL(location, encoded=True))
            if resp.status >= 300:
                head = await _first_bytes(resp, 300)
                raise RequestFailed(
                    f"HTTP {resp.status} from {method} {shown}: {redact_text(head.decode('utf-8', 'replace'))}",
                    retryable=resp.status in RETRY_STATUSES or resp.status >= 500,
                    status=resp.status, retry_after=parse_retry_after(resp.headers.get("Retry-After")))
            await _stream_into(resp, sink, cap, f"{method} {shown}: answer larger than {cap} bytes (raise {cap_env} "
                               "to accept it)")
            return None


def _form_data(form: Form) -> aiohttp.FormData:
    """A fresh multipart body for each attempt (aiohttp sends a FormData once)."""
    data = aiohttp.FormData()
    for name, value in form.items():
        if isinstance(value, str):
            data.add_field(name, value)
        else:
            filename, content, content_type = value
            data.add_field(name, content, filename=filename, content_type=content_type)
    return data


async def _first_bytes(resp: aiohttp.ClientResponse, n: int) -> bytes:
    """The start of a body (an error message), never the whole of a huge one."""
    got = b""
    while len(got) < n and (chunk := await resp.content.read(n - len(got))):
        got += chunk
    return got


async def _stream_into(resp: aiohttp.ClientResponse, sink: IO[bytes], cap: int, too_large: str) -> None:
    total = 0
    async for chunk in resp.content.iter_chunked(CHUNK):
        total += len(chunk)
        if total > cap:
            raise RequestFailed(too_large, retryable=False)
        sink.write(chunk)


def jsonl_lines(f: IO[bytes], max_line: int | None = None) -> Iterator[Line]:
    """The lines of a JSONL file, each parsed on its own: a line too long, too deep or not JSON is a `Line`
    with a problem (its request then comes back as an error record, never as an answer)."""
    limit = max_line if max_line is not None else max_body_bytes()
    number = 0
    while True:
        raw = f.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            _skip_rest_of_line(f)
            yield Line(number, problem=f"longer than {limit} bytes", custom_id=_custom_id_of(raw))
            continue
        if not raw.strip():
            continue
        try:
            yield Line(number, value=json.loads(raw))
        except RecursionError:
            yield Line(number, problem="JSON nested too deeply", custom_id=_custom_id_of(raw))
        except ValueError:
            yield Line(number, problem="not JSON", custom_id=_custom_id_of(raw))


_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"')


def _custom_id_of(raw: bytes) -> str | None:
    """The custom_id near the start of a broken line (providers write it first or second), if any."""
    m = _CUSTOM_ID.search(raw[:4096])
    return m.group(1).decode() if m else None


def _skip_rest_of_line(f: IO[bytes]) -> None:
    while True:
        chunk = f.readline(CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


__all__ = ["BatchHTTP", "Id", "Lenient", "Line", "join_url", "jsonl_lines", "max_batch_bytes", "parse_reply", "parse_status"]
