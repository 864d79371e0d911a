"""Provider batch APIs against the local test server: submit, poll, collect, partial failure, expiry,
and resume after kill -9 without paying twice — for OpenAI's Batch API and Anthropic's Message Batches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from proctor.models import Capability, GenerateRequest, GenerationSettings, Message
from proctor.models.batch import STATE_FILE, BatchState, request_ids
from proctor.models.batch_anthropic import AnthropicBatchModel
from proctor.models.batch_openai import OpenAIBatchModel
from proctor.models.openai import OpenAIModel
from proctor.testing import LocalServer
from proctor.util.errors import InputError

pytest.importorskip("uvicorn")

SRC = str(Path(__file__).resolve().parents[2] / "src")
SETTINGS = GenerationSettings(temperature=0.6, top_p=0.95, max_tokens=64, reasoning_effort="high")


def questions(n: int, tag: str = "Q") -> list[GenerateRequest]:
    return [GenerateRequest((Message("user", f"{tag}{i}: which?\n(A) x\n(B) y"),), SETTINGS) for i in range(n)]


Factory = Callable[[LocalServer, Path], Any]
PROVIDERS: dict[str, Factory] = {
    "openai": lambda srv, d: OpenAIBatchModel("gpt-test", base_url=srv.base_url, state_dir=d, poll_interval=0.01,
                                              backoff_base=0.01),
    "anthropic": lambda srv, d: AnthropicBatchModel("claude-test", base_url=srv.url, state_dir=d, poll_interval=0.01,
                                                    backoff_base=0.01),
}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(srv: LocalServer) -> LocalServer:
    srv.configure(responder="first", poison=None, batch_polls=2, batch_expire=False, reasoning=None, fault_rate=0.0,
                  api_key=None)
    return srv


def created(srv: LocalServer, provider: str) -> int:
    return int(httpx.get(f"{srv.url}/stats/batches", timeout=10).json()["created"][provider])


def file_lines(srv: LocalServer, file_id: str) -> list[str]:
    return httpx.get(f"{srv.base_url}/files/{file_id}/content", timeout=10).text.splitlines()


def state(d: Path) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = json.loads((d / STATE_FILE).read_text())["jobs"]
    return jobs


async def test_submit_poll_collect_in_order_with_reasoning(server: LocalServer, provider: str, tmp_path: Path) -> None:
    server.configure(reasoning="Think: x then y.")
    model = PROVIDERS[provider](server, tmp_path)
    before = created(server, provider)
    reqs = questions(5)
    gens = await model.generate(reqs)
    assert [g.error for g in gens] == [None] * 5
    assert all(g.text == "The answer is (A)" and g.reasoning == "Think: x then y." for g in gens)
    assert all(g.input_tokens and g.output_tokens == 4 for g in gens)
    assert created(server, provider) == before + 1  # one batch for the whole run
    [job] = state(tmp_path)
    assert job["custom_ids"] == request_ids(model.model, reqs) and job["ended"] and job["failed_ids"] == []
    again = await model.generate(reqs)  # the recorded batch answers again: nothing new is paid for
    assert [g.text for g in again] == [g.text for g in gens] and created(server, provider) == before + 1
    assert Capability.LOGLIKELIHOOD not in model.capabilities and model.describe()["batch_api"] is True


async def test_batch_bodies_are_the_online_bodies(server: LocalServer, tmp_path: Path) -> None:
    """The JSONL line carries exactly what the one-by-one backend sends (reasoning settings included)."""
    req = questions(1)[0]
    online = OpenAIModel("gpt-test", base_url=server.base_url)
    await online.generate([req])
    online_body = server.stats()["last_body"]
    batch = PROVIDERS["openai"](server, tmp_path)
    await batch.generate([req])
    input_file = state(tmp_path)[0]["input_file_id"]
    [line] = file_lines(server, input_file)
    sent = json.loads(line)
    assert sent["method"] == "POST" and sent["url"] == "/v1/chat/completions"
    assert sent["body"] == online_body and sent["body"]["reasoning_effort"] == "high"


async def test_partially_failed_batch_gives_error_records_and_resubmits_only_those(
        server: LocalServer, provider: str, tmp_path: Path) -> None:
    server.configure(poison="Q2:")
    model = PROVIDERS[provider](server, tmp_path)
    reqs = questions(4)
    before = created(server, provider)
    gens = await model.generate(reqs)
    assert [g.error is None for g in gens] == [True, True, False, True]
    assert "poisoned request" in (gens[2].error or "")
    assert state(tmp_path)[0]["failed_ids"] == [request_ids(model.model, reqs)[2]]
    server.configure(poison=None)
    gens = await model.generate(reqs)
    assert all(g.error is None for g in gens)
    jobs = state(tmp_path)
    assert created(server, provider) == before + 2 and len(jobs) == 2
    assert jobs[1]["custom_ids"] == [request_ids(model.model, reqs)[2]]  # only the failed one was paid again


async def test_expired_batch_keeps_what_finished(server: LocalServer, provider: str, tmp_path: Path) -> None:
    server.configure(batch_expire=True)
    model = PROVIDERS[provider](server, tmp_path)
    gens = await model.generate(questions(6))
    assert [g.error is None for g in gens] == [True] * 3 + [False] * 3
    assert all("expired" in (g.error or "") for g in gens[3:])
    job = state(tmp_path)[0]
    assert "expired" in job["status"] and len(job["failed_ids"]) == 3
    server.configure(batch_expire=False)
    assert all(g.error is None for g in await model.generate(questions(6)))
    assert len(state(tmp_path)[1]["custom_ids"]) == 3


async def test_max_wait_returns_errors_and_the_next_run_collects(server: LocalServer, provider: str,
                                                                tmp_path: Path) -> None:
    server.configure(batch_polls=10_000)
    model = PROVIDERS[provider](server, tmp_path)
    model.options = type(model.options)(model.options.state_path, poll_interval=0.01, max_wait=0.05)
    before = created(server, provider)
    gens = await model.generate(questions(2))
    assert all("no result yet" in (g.error or "") and "run again" in (g.error or "") for g in gens)
    server.configure(batch_polls=1)
    gens = await PROVIDERS[provider](server, tmp_path).generate(questions(2))
    assert all(g.error is None for g in gens) and created(server, provider) == before + 1


KILLED_CLIENT = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {src!r})
    from proctor.models import GenerateRequest, GenerationSettings, Message
    from proctor.models.batch_{provider} import {cls}
    settings = GenerationSettings(temperature=0.6, top_p=0.95, max_tokens=64, reasoning_effort="high")
    reqs = [GenerateRequest((Message("user", f"Q{{i}}: which?\\n(A) x\\n(B) y"),), settings) for i in range(8)]
    model = {cls}({name!r}, base_url={url!r}, state_dir={state_dir!r}, poll_interval=0.05)
    asyncio.run(model.generate(reqs))
""")


def recorded(state_dir: Path) -> bool:
    """The state file names an accepted batch (not only the intent to submit one)."""
    try:
        return any(j["batch_id"] for j in state(state_dir))
    except (OSError, ValueError):
        return False


def kill_while_polling(code: str, state_dir: Path) -> None:
    """Run a batch client in its own process and kill -9 it once it has recorded its batch and is polling."""
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC})
    try:
        deadline = time.monotonic() + 60
        while not recorded(state_dir):
            assert proc.poll() is None and time.monotonic() < deadline, "the client never recorded its batch"
            time.sleep(0.02)
        time.sleep(0.2)  # it is polling now
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


async def test_resume_after_kill_9_polls_the_same_batch(server: LocalServer, provider: str, tmp_path: Path) -> None:
    server.configure(batch_polls=100_000)  # the batch stays in progress while the client runs
    before = created(server, provider)
    cls, name, url = ({"openai": ("OpenAIBatchModel", "gpt-test", server.base_url),
                       "anthropic": ("AnthropicBatchModel", "claude-test", server.url)}[provider])
    code = KILLED_CLIENT.format(src=SRC, provider=provider, cls=cls, name=name, url=url, state_dir=str(tmp_path))
    kill_while_polling(code, tmp_path)
    [job] = state(tmp_path)
    assert not job["ended"] and created(server, provider) == before + 1
    server.configure(batch_polls=1)  # the provider finishes the batch (a reconfigure keeps batches)
    gens = await PROVIDERS[provider](server, tmp_path).generate(questions(8))
    assert all(g.error is None and g.text == "The answer is (A)" for g in gens)
    assert created(server, provider) == before + 1  # picked up, not paid twice
    assert [j["batch_id"] for j in state(tmp_path)] == [job["batch_id"]]


async def test_unreadable_state_file_is_a_clear_error(server: LocalServer, tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{not json")
    with pytest.raises(InputError, match=r"batches.json: unreadable batch state .*repair it"):
        BatchState.load(tmp_path / STATE_FILE)


async def test_duplicate_requests_get_distinct_ids_and_answers(server: LocalServer, provider: str,
                                                               tmp_path: Path) -> None:
    reqs = questions(1) * 3  # epochs with the same settings: the same request three times
    ids = request_ids("m", reqs)
    assert len(set(ids)) == 3 and all(len(i) <= 64 for i in ids)
    gens = await PROVIDERS[provider](server, tmp_path).generate(reqs)
    assert [g.error for g in gens] == [None] * 3


async def test_submission_failure_is_error_records_not_a_crash(server: LocalServer, provider: str,
                                                               tmp_path: Path) -> None:
    server.configure(api_key="right-key")
    gens = await PROVIDERS[provider](server, tmp_path).generate(questions(2))
    assert all("batch not submitted" in (g.error or "") and "401" in (g.error or "") for g in gens)
    assert state(tmp_path) == []  # the intent to submit was withdrawn: nothing to resume


class Killed(BaseException):
    """Stands for kill -9 at one exact instant (a BaseException: nothing catches it on the way out)."""


async def test_kill_between_acceptance_and_record_is_settled_next_run(server: LocalServer, provider: str,
                                                                      tmp_path: Path, monkeypatch: Any) -> None:
    """The provider accepted the batch but proctor died before writing its id: OpenAI's batch is found
    again by its metadata (not paid twice); Message Batches carry no metadata, so it is submitted again."""
    model = PROVIDERS[provider](server, tmp_path)
    real_submit = model.batches.submit

    async def accepted_then_killed(*args: Any) -> Any:
        await real_submit(*args)
        raise Killed

    monkeypatch.setattr(model.batches, "submit", accepted_then_killed)
    before = created(server, provider)
    with pytest.raises(Killed):
        await model.generate(questions(3))
    [intent] = state(tmp_path)
    assert intent["status"] == "submitting" and intent["batch_id"] == ""
    assert created(server, provider) == before + 1
    gens = await PROVIDERS[provider](server, tmp_path).generate(questions(3))
    assert all(g.error is None for g in gens)
    paid = {"openai": 1, "anthropic": 2}[provider]
    assert created(server, provider) == before + paid
    assert [j["status"] != "submitting" for j in state(tmp_path)] == [True]


async def test_batch_refused_as_a_whole_is_error_records(server: LocalServer, tmp_path: Path) -> None:
    """A batch whose input file fails validation ends 'failed': every request is an error record saying why."""
    from proctor.models.batch import BatchJob
    from proctor.models.batch_openai import _update

    model = PROVIDERS["openai"](server, tmp_path)
    bad = b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}\nnot json\n'
    batch = upload_and_create(server, bad)
    assert batch["status"] == "failed" and batch["errors"]["data"][0]["line"] == 2
    job = BatchJob("openai", batch["id"], ["a"], 0.0)
    _update(job, batch)
    assert job.ended and job.detail == "line 2: not a valid batch request line"
    [(cid, gen)] = (await model.batches.collect(job)).results
    assert cid == "a" and "failed: line 2: not a valid batch request line" in (gen.error or "")


def upload_and_create(srv: LocalServer, content: bytes) -> dict[str, Any]:
    f = httpx.post(f"{srv.base_url}/files", data={"purpose": "batch"}, files={"file": ("b.jsonl", content)}, timeout=10)
    body = {"input_file_id": f.json()["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"}
    data: dict[str, Any] = httpx.post(f"{srv.base_url}/batches", json=body, timeout=10).json()
    return data


def test_openai_batch_backend_is_chat_only(tmp_path: Path) -> None:
    from proctor.util.errors import ProctorError

    with pytest.raises(ProctorError, match="chat=False is not supported"):
        OpenAIBatchModel("m", base_url="http://127.0.0.1:9/v1", state_dir=tmp_path, chat=False)
