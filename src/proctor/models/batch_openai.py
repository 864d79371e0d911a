"""OpenAI's Batch API for `openai:` models: a JSONL file of chat requests, one batch, its output files.

Protocol: upload the requests (`POST /v1/files`, purpose=batch), create the batch (`POST /v1/batches`,
endpoint /v1/chat/completions, window 24h), poll `GET /v1/batches/{id}` until completed / failed / expired /
cancelled, then read the output file (answers) and the error file (failed and expired requests) from
`GET /v1/files/{id}/content`. Request bodies are exactly those `OpenAIModel` sends one by one, so the
reasoning settings and `extra_body` apply unchanged. The shared machinery (state file, resume) is
`proctor.models.batch`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from ..core.model import Capability, GenerateRequest, Generation
from ..util.errors import ProctorError
from .batch import BatchBackend, BatchJob, Collected
from .batch_http import BatchHTTP, Id, Lenient, parse_reply, parse_status, shape_problem
from .openai import OpenAIModel, parse_chat_completion

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
SUBMISSION_KEY = "proctor_submission"
RECOVER_PAGES = 20  # batches listed (100 a page) when looking for a cut-off submission


class FileReply(Lenient):
    """`POST /v1/files`: the uploaded file's id is all proctor needs."""

    id: Id


class BatchReply(Lenient):
    """`POST /v1/batches`, `GET /v1/batches/{id}`: the id and status are relied on; `errors` and the counts
    are shown as they come, whatever their shape."""

    id: Id
    status: str | None = None  # required of a status reply (`_update`); a create reply is kept without it
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: Any = None
    metadata: Any = None


class BatchPage(Lenient):
    """`GET /v1/batches`: a page of batches, newest first (entries of another shape are passed over)."""

    data: list[Any] = Field(default_factory=list)
    has_more: bool = False


class Response(Lenient):
    status_code: int
    body: Any = None


class OutputLine(Lenient):
    """One line of an output or error file."""

    custom_id: Id
    response: Response | None = None
    error: Any = None


class OpenAIBatches:
    """The Batch API protocol (a `BatchProvider`)."""

    name = "openai"
    max_requests = 50_000  # the API's per-batch limit

    def __init__(self, model: OpenAIModel, http: BatchHTTP) -> None:
        self.model = model
        self.http = http

    async def submit(self, items: Sequence[tuple[str, GenerateRequest]], submission: str) -> BatchJob:
        lines = [json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": self.model.chat_body(r)})
                 for cid, r in items]
        content = ("\n".join(lines) + "\n").encode()
        uploaded = parse_reply(FileReply, await self.http.json(
            "POST", "/files", form={"purpose": "batch", "file": ("proctor-batch.jsonl", content, "application/jsonl")}),
            "POST /files")
        batch = parse_reply(BatchReply, await self.http.json("POST", "/batches", body={
            "input_file_id": uploaded.id, "endpoint": ENDPOINT, "completion_window": "24h",
            "metadata": {"created_by": "proctor", SUBMISSION_KEY: submission}}), "POST /batches")
        job = BatchJob(self.name, batch.id, [cid for cid, _ in items], time.time(), input_file_id=uploaded.id,
                       submission=submission)
        _apply(job, batch)
        return job

    async def recover(self, intent: BatchJob) -> BatchJob | None:
        """Find the batch whose metadata carries the intent's submission key (the newest batches first)."""
        after: str | None = None
        for _ in range(RECOVER_PAGES):
            page = parse_reply(BatchPage, await self.http.json(
                "GET", "/batches", params={"limit": 100, **({"after": after} if after else {})}), "GET /batches")
            listed = [b for b in (_listed(x) for x in page.data) if b is not None]
            for batch in listed:
                if isinstance(batch.metadata, dict) and batch.metadata.get(SUBMISSION_KEY) == intent.submission:
                    job = BatchJob(self.name, batch.id, intent.custom_ids, intent.submitted_at,
                                   input_file_id=batch.input_file_id, submission=intent.submission)
                    _apply(job, batch)
                    return job
            if not page.has_more or not listed:
                return None
            after = listed[-1].id
        return None

    async def poll(self, job: BatchJob) -> None:
        _update(job, await self.http.json("GET", f"/batches/{job.batch_id}"))

    async def collect(self, job: BatchJob) -> Collected:
        got = Collected()
        for what, file_id in (("output file", job.output_file_id), ("error file", job.error_file_id)):
            if file_id:
                with await self.http.download(f"/files/{file_id}/content") as f:
                    got.read(f, f"{what} {file_id}", _generation)
        if job.detail:  # the whole batch was refused (a validation failure)
            answered = {cid for cid, _ in got.results}
            got.results += [(cid, Generation(error=f"openai batch {job.batch_id} failed: {job.detail}"))
                            for cid in job.custom_ids if cid not in answered]
        return got


def _listed(entry: object) -> BatchReply | None:
    try:
        return BatchReply.model_validate(entry)
    except ValidationError:
        return None


def _update(job: BatchJob, data: object) -> None:
    """Refresh `job` from a batch object (a ProctorError when it is not one or has no status)."""
    _apply(job, parse_status(BatchReply, data, f"GET /batches/{job.batch_id}", "status"))


def _apply(job: BatchJob, batch: BatchReply) -> None:
    job.status = batch.status or job.status
    job.ended = job.status in ENDED
    job.output_file_id = batch.output_file_id or job.output_file_id
    job.error_file_id = batch.error_file_id or job.error_file_id
    detail = _errors_detail(batch.errors)
    if detail:
        job.detail = detail


def _errors_detail(errors: Any) -> str | None:
    """Why a batch was refused, from `errors` (`{data: [{line, message}]}` as documented, or anything else)."""
    if not errors:
        return None
    items = errors.get("data", errors.get("message")) if isinstance(errors, dict) else errors
    if not items:
        return None
    if not isinstance(items, list):
        return str(items)[:500]
    return "; ".join(f"line {e.get('line')}: {e.get('message')}" if isinstance(e, dict) else str(e)[:200]
                     for e in items[:5])


def _generation(line: dict[str, Any]) -> Generation:
    """One output- or error-file line as a Generation (an error record unless the request succeeded)."""
    try:
        parsed = OutputLine.model_validate(line)
    except ValidationError as e:
        return Generation(error=f"unexpected line shape in the batch output ({shape_problem(e)})")
    if parsed.error:
        return Generation(error=f"batch request failed: {_error_text(parsed.error)}")
    if parsed.response is None:
        return Generation(error="batch output line with neither a response nor an error")
    body, status = parsed.response.body, parsed.response.status_code
    if status != 200:
        inner = body.get("error") if isinstance(body, dict) else None
        return Generation(error=f"HTTP {status} inside the batch: {_error_text(inner) if inner else ''}".rstrip())
    if not isinstance(body, dict):
        return Generation(error=f"unexpected response shape in the batch output: body is {type(body).__name__}")
    try:
        return parse_chat_completion(body)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as e:
        return Generation(error=f"unexpected response shape in the batch output: {type(e).__name__}: {e}"[:500])


def _error_text(error: Any) -> str:
    """`code: message` of an error object, or the error as it came (a string, a number)."""
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return str(error)[:300]


class OpenAIBatchModel(BatchBackend, OpenAIModel):
    """`openai:<model>` through the Batch API; the state file lives in `state_dir` (the run directory)."""

    capabilities = frozenset({Capability.GENERATE, Capability.TOOLS})  # tools go out in each line's body
    text_completion = False  # batch lines are chat completions
    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, *, state_dir: str | Path | None = None,
                 poll_interval: float = 30.0, max_wait: float = 24 * 3600.0, api_key: str | None = None,
                 seed: int = 0, **kw: Any) -> None:
        if not kw.get("chat", True):
            raise ProctorError("the Batch API backend sends chat completions; chat=False is not supported")
        super().__init__(model, base_url, api_key=api_key, seed=seed, **kw)
        self._use_batches(OpenAIBatches(self, self._batch_http(seed)), state_dir, poll_interval, max_wait)

    def _described_settings(self) -> dict[str, Any]:
        return {**super()._described_settings(), "batch_api": True}
