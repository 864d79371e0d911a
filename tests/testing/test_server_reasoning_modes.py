"""The test server's modes for issue 15: a concurrency rate limit, max_tokens truncation, batch listing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from proctor.testing import LocalServer, serve
from proctor.testing.batches import parse_multipart

pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with serve() as s:
        yield s


def chat(srv: LocalServer, **body: object) -> httpx.Response:
    return httpx.post(f"{srv.base_url}/chat/completions",
                      json={"model": "m", "messages": [{"role": "user", "content": "Q?\n(A) a"}], **body}, timeout=10)


async def test_capacity_answers_429_with_retry_after_beyond_it(srv: LocalServer) -> None:
    srv.configure(capacity=2, latency=0.2, retry_after=0.5)
    async with httpx.AsyncClient(timeout=10) as client:
        body = {"model": "m", "messages": [{"role": "user", "content": "Q?"}]}
        replies = await asyncio.gather(*(client.post(f"{srv.base_url}/chat/completions", json=body) for _ in range(6)))
    codes = sorted(r.status_code for r in replies)
    assert codes.count(200) >= 2 and codes.count(429) >= 1
    assert all(r.headers["retry-after"] == "0.5" for r in replies if r.status_code == 429)
    assert srv.stats()["faults"]["capacity"] == codes.count(429)


def test_truncate_mode_cuts_at_max_tokens(srv: LocalServer) -> None:
    srv.configure(truncate=True, responder="fixed=one two three four five")
    choice = chat(srv, max_tokens=3).json()["choices"][0]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("one two three", "length")
    assert chat(srv, max_tokens=5).json()["choices"][0]["finish_reason"] == "stop"
    srv.configure(truncate=False, responder="fixed=one two three four five")
    assert chat(srv, max_tokens=3).json()["choices"][0]["message"]["content"] == "one two three four five"


def test_batch_list_pages_newest_first(srv: LocalServer) -> None:
    srv.configure()
    ids = []
    for i in range(3):
        line = json.dumps({"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions",
                           "body": {"model": "m", "messages": [{"role": "user", "content": "Q"}]}}) + "\n"
        f = httpx.post(f"{srv.base_url}/files", data={"purpose": "batch"}, files={"file": ("b.jsonl", line)}).json()
        b = httpx.post(f"{srv.base_url}/batches", json={"input_file_id": f["id"], "endpoint": "/v1/chat/completions",
                                                         "completion_window": "24h", "metadata": {"k": str(i)}})
        ids.append(b.json()["id"])
    first = httpx.get(f"{srv.base_url}/batches", params={"limit": 2}).json()
    assert [b["id"] for b in first["data"]] == ids[::-1][:2] and first["has_more"]
    rest = httpx.get(f"{srv.base_url}/batches", params={"limit": 2, "after": first["last_id"]}).json()
    assert [b["id"] for b in rest["data"]] == [ids[0]] and not rest["has_more"]
    assert rest["data"][0]["metadata"] == {"k": "0"}


def test_parse_multipart_reads_httpx_uploads() -> None:
    req = httpx.Request("POST", "http://x/v1/files", data={"purpose": "batch"},
                        files={"file": ("b.jsonl", b'{"a": 1}\n\xff', "application/jsonl")})
    body = req.read()
    assert parse_multipart(req.headers["content-type"], body) == {"purpose": b"batch", "file": b'{"a": 1}\n\xff'}
