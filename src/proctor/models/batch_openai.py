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

from ..errors import ProctorError
from .base import Capability, GenerateRequest, Generation
from .batch import BatchBackend, BatchHTTP, BatchJob, jsonl_lines
from .openai import OpenAIModel, parse_chat_completion

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
SUBMISSION_KEY = "proctor_submission"
RECOVER_PAGES = 20  # batches listed (100 a page) when looking for a cut-off submission


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
        uploaded = await self.http.json("POST", "/files", data={"purpose": "batch"},
                                        files={"file": ("proctor-batch.jsonl", content, "application/jsonl")})
        batch = await self.http.json("POST", "/batches", json={
            "input_file_id": uploaded["id"], "endpoint": ENDPOINT, "completion_window": "24h",
            "metadata": {"created_by": "proctor", SUBMISSION_KEY: submission}})
        job = BatchJob(self.name, batch["id"], [cid for cid, _ in items], time.time(), input_file_id=uploaded["id"],
                       submission=submission)
        _update(job, batch)
        return job

    async def recover(self, intent: BatchJob) -> BatchJob | None:
        """Find the batch whose metadata carries the intent's submission key (the newest batches first)."""
        after: str | None = None
        for _ in range(RECOVER_PAGES):
            page = await self.http.json("GET", "/batches", params={"limit": 100, **({"after": after} if after else {})})
            for batch in page.get("data") or []:
                if (batch.get("metadata") or {}).get(SUBMISSION_KEY) == intent.submission:
                    job = BatchJob(self.name, batch["id"], intent.custom_ids, intent.submitted_at,
                                   input_file_id=batch.get("input_file_id"), submission=intent.submission)
                    _update(job, batch)
                    return job
            if not page.get("has_more") or not page.get("data"):
                return None
            after = page["data"][-1]["id"]
        return None

    async def poll(self, job: BatchJob) -> None:
        _update(job, await self.http.json("GET", f"/batches/{job.batch_id}"))

    async def collect(self, job: BatchJob) -> dict[str, Generation]:
        out: dict[str, Generation] = {}
        for file_id in (job.output_file_id, job.error_file_id):
            if file_id:
                resp = await self.http.request("GET", f"/files/{file_id}/content")
                for line in jsonl_lines(resp.text):
                    if isinstance(line.get("custom_id"), str):
                        out[line["custom_id"]] = _generation(line)
        if job.detail:  # the whole batch was refused (a validation failure)
            for cid in job.custom_ids:
                out.setdefault(cid, Generation(error=f"openai batch {job.batch_id} failed: {job.detail}"))
        return out


def _update(job: BatchJob, batch: dict[str, Any]) -> None:
    job.status = str(batch.get("status"))
    job.ended = job.status in ENDED
    job.output_file_id = batch.get("output_file_id") or job.output_file_id
    job.error_file_id = batch.get("error_file_id") or job.error_file_id
    errors = (batch.get("errors") or {}).get("data") or []
    if errors:
        job.detail = "; ".join(f"line {e.get('line')}: {e.get('message')}" for e in errors[:5])


def _generation(line: dict[str, Any]) -> Generation:
    """One output- or error-file line as a Generation (an error record unless the request succeeded)."""
    error = line.get("error")
    if error:
        return Generation(error=f"batch request failed: {error.get('code')}: {error.get('message')}")
    resp = line.get("response") or {}
    body = resp.get("body") or {}
    status = resp.get("status_code")
    if status != 200:
        message = (body.get("error") or {}).get("message", "") if isinstance(body, dict) else ""
        return Generation(error=f"HTTP {status} inside the batch: {message}")
    try:
        return parse_chat_completion(body)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        return Generation(error=f"unexpected response shape in the batch output: {type(e).__name__}: {e}")


class OpenAIBatchModel(BatchBackend, OpenAIModel):
    """`openai:<model>` through the Batch API; the state file lives in `state_dir` (the run directory)."""

    capabilities = frozenset({Capability.GENERATE})
    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, *, state_dir: str | Path | None = None,
                 poll_interval: float = 30.0, max_wait: float = 24 * 3600.0, api_key: str | None = None,
                 seed: int = 0, **kw: Any) -> None:
        if not kw.get("chat", True):
            raise ProctorError("the Batch API backend sends chat completions; chat=False is not supported")
        super().__init__(model, base_url, api_key=api_key, seed=seed, **kw)
        http = BatchHTTP(self.base_urls[0], self._headers(api_key), self.http.policy, seed)
        self._use_batches(OpenAIBatches(self, http), state_dir, poll_interval, max_wait)

    def _described_settings(self) -> dict[str, Any]:
        return {**super()._described_settings(), "batch_api": True}
