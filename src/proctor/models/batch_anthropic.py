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

from .anthropic import AnthropicModel, parse_message
from .base import GenerateRequest, Generation
from .batch import BatchBackend, BatchHTTP, BatchJob, jsonl_lines

PATH = "/v1/messages/batches"


class AnthropicBatches:
    """The Message Batches protocol (a `BatchProvider`)."""

    name = "anthropic"
    max_requests = 100_000  # the API's per-batch limit

    def __init__(self, model: AnthropicModel, http: BatchHTTP) -> None:
        self.model = model
        self.http = http

    async def submit(self, items: Sequence[tuple[str, GenerateRequest]], submission: str) -> BatchJob:
        body = {"requests": [{"custom_id": cid, "params": self.model.body(r)} for cid, r in items]}
        batch = await self.http.json("POST", PATH, json=body)
        job = BatchJob(self.name, batch["id"], [cid for cid, _ in items], time.time())
        _update(job, batch)
        return job

    async def poll(self, job: BatchJob) -> None:
        _update(job, await self.http.json("GET", f"{PATH}/{job.batch_id}"))

    async def recover(self, intent: BatchJob) -> BatchJob | None:
        """Message Batches carry no metadata, so a batch accepted in the instant before a kill cannot be
        told apart from others: None, and its requests are submitted again (logged)."""
        return None

    async def collect(self, job: BatchJob) -> dict[str, Generation]:
        url = job.results_url or f"{PATH}/{job.batch_id}/results"
        resp = await self.http.request("GET", url)
        return {line["custom_id"]: _generation(line.get("result") or {})
                for line in jsonl_lines(resp.text) if isinstance(line.get("custom_id"), str)}


def _update(job: BatchJob, batch: dict[str, Any]) -> None:
    job.status = str(batch.get("processing_status"))
    job.ended = job.status == "ended"
    job.results_url = batch.get("results_url") or job.results_url
    if job.ended:
        counts = batch.get("request_counts") or {}
        job.status = "ended (" + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")"


def _generation(result: dict[str, Any]) -> Generation:
    kind = result.get("type")
    if kind == "succeeded":
        try:
            return parse_message(result["message"])
        except (KeyError, TypeError, ValueError) as e:
            return Generation(error=f"unexpected message shape in the batch results: {type(e).__name__}: {e}")
    if kind == "errored":
        inner = (result.get("error") or {}).get("error") or {}
        return Generation(error=f"batch request errored: {inner.get('type')}: {inner.get('message')}")
    return Generation(error=f"batch request {kind or 'has no result'} (not run; the next run submits it again)")


class AnthropicBatchModel(BatchBackend, AnthropicModel):
    """`anthropic:<model>` through Message Batches; the state file lives in `state_dir` (the run directory)."""

    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, *, state_dir: str | Path | None = None,
                 poll_interval: float = 30.0, max_wait: float = 24 * 3600.0, api_key: str | None = None,
                 seed: int = 0, **kw: Any) -> None:
        super().__init__(model, base_url, api_key=api_key, seed=seed, **kw)
        http = BatchHTTP(self.base_urls[0], self._headers(api_key), self.http.policy, seed)
        self._use_batches(AnthropicBatches(self, http), state_dir, poll_interval, max_wait)

    def _described_settings(self) -> dict[str, Any]:
        return {**super()._described_settings(), "batch_api": True}
