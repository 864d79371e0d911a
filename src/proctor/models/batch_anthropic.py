"""Anthropic's Message Batches for `anthropic:` models.

Protocol: `POST /v1/messages/batches` with `requests: [{custom_id, params}]` (params are exactly the
Messages API bodies `AnthropicModel` sends one by one, extended thinking included), poll
`GET /v1/messages/batches/{id}` until `processing_status` is `ended`, then read the JSONL at its
`results_url`: one line per request, `succeeded` (a message), `errored`, `expired` or `canceled`. The
shared machinery (state file, resume) is `proctor.models.batch`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.model import GenerateRequest, Generation
from .anthropic import AnthropicModel, parse_message
from .batch import BatchBackend, BatchJob, Collected
from .batch_http import BatchHTTP, Id, Lenient, parse_reply, parse_status, shape_problem

PATH = "/v1/messages/batches"


class MessageBatch(Lenient):
    """A Message Batch object: the id and processing status are relied on; the counts are shown when they
    are a mapping of numbers, whatever else they are."""

    id: Id
    processing_status: str | None = None  # required of a status reply (`_update`), not of a create reply
    results_url: str | None = None
    request_counts: Any = None


class Result(Lenient):
    """A result line's `result`: its type decides; the message or error is read by its own parser."""

    type: str
    message: Any = None
    error: Any = None


class AnthropicBatches:
    """The Message Batches protocol (a `BatchProvider`)."""

    name = "anthropic"
    max_requests = 100_000  # the API's per-batch limit

    def __init__(self, model: AnthropicModel, http: BatchHTTP) -> None:
        self.model = model
        self.http = http

    async def submit(self, items: Sequence[tuple[str, GenerateRequest]], submission: str) -> BatchJob:
        body = {"requests": [{"custom_id": cid, "params": self.model.body(r)} for cid, r in items]}
        batch = parse_reply(MessageBatch, await self.http.json("POST", PATH, body=body), f"POST {PATH}")
        job = BatchJob(self.name, batch.id, [cid for cid, _ in items], time.time())
        _apply(job, batch)
        return job

    async def poll(self, job: BatchJob) -> None:
        _update(job, await self.http.json("GET", f"{PATH}/{job.batch_id}"))

    async def recover(self, intent: BatchJob) -> BatchJob | None:
        """Message Batches carry no metadata, so a batch accepted in the instant before a kill cannot be
        told apart from others: None, and its requests are submitted again (logged)."""
        return None

    async def collect(self, job: BatchJob) -> Collected:
        """The results JSONL; a `results_url` on another origin is fetched without the API key."""
        got = Collected()
        with await self.http.download(job.results_url or f"{PATH}/{job.batch_id}/results") as f:
            got.read(f, "results", _line_generation)
        return got


def _update(job: BatchJob, data: object) -> None:
    _apply(job, parse_status(MessageBatch, data, f"GET {PATH}/{job.batch_id}", "processing_status"))


def _apply(job: BatchJob, batch: MessageBatch) -> None:
    job.status = batch.processing_status or job.status
    job.ended = job.status == "ended"
    job.results_url = batch.results_url or job.results_url
    if job.ended:
        counts = batch.request_counts if isinstance(batch.request_counts, dict) else {}
        shown = ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, int) and v)
        job.status = f"ended ({shown})" if shown else "ended"


def _line_generation(line: dict[str, Any]) -> Generation:
    try:
        result = Result.model_validate(line.get("result"))
    except ValidationError as e:
        return Generation(error=f"unexpected result shape in the batch results ({shape_problem(e)})")
    return _generation(result)


def _generation(result: Result) -> Generation:
    if result.type == "succeeded":
        if not isinstance(result.message, dict):
            return Generation(error="unexpected message shape in the batch results: not an object")
        try:
            return parse_message(result.message)
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            return Generation(error=f"unexpected message shape in the batch results: {type(e).__name__}: {e}"[:500])
    if result.type == "errored":
        outer = result.error if isinstance(result.error, dict) else {}
        inner = outer.get("error") if isinstance(outer.get("error"), dict) else outer
        if inner:
            return Generation(error=f"batch request errored: {inner.get('type')}: {inner.get('message')}"[:500])
        return Generation(error=f"batch request errored: {str(result.error)[:300]}")
    return Generation(error=f"batch request {result.type[:40]} (not run; the next run submits it again)")


class AnthropicBatchModel(BatchBackend, AnthropicModel):
    """`anthropic:<model>` through Message Batches; the state file lives in `state_dir` (the run directory)."""

    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, *, state_dir: str | Path | None = None,
                 poll_interval: float = 30.0, max_wait: float = 24 * 3600.0, api_key: str | None = None,
                 seed: int = 0, **kw: Any) -> None:
        super().__init__(model, base_url, api_key=api_key, seed=seed, **kw)
        self._use_batches(AnthropicBatches(self, self._batch_http(seed)), state_dir, poll_interval, max_wait)

    def _described_settings(self) -> dict[str, Any]:
        return {**super()._described_settings(), "batch_api": True}
