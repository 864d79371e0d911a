"""An agent run (BFCL's function-calling kind against the stand-in server's scripted tool calls) killed with
SIGKILL mid-way, then resumed by the same command: no finished sample is lost or asked again, and the results
equal an uninterrupted run. And a trajectory cut off mid-way resumes from its start, each turn it had made
answered by the request cache (`run.chunk`, docs/agents.md)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from benchmarks.bfcl_rows import write

import proctor
from proctor.core.model import Capability, GenerateRequest, Generation, Message, ModelBase
from proctor.core.tools import ToolCall
from proctor.data.records import Item, Modality
from proctor.data.tasks import Task
from proctor.run.cache import CachedModel
from proctor.run.chunk import score_chunk
from proctor.run.store import Store
from proctor.scoring.agent import python_tool
from proctor.scoring.agent_scorer import AgentScorer, AgentTask
from proctor.scoring.extract import AnswerRule, Extraction
from proctor.scoring.scorers import score_item

pytest.importorskip("uvicorn")

from proctor.testing import serve

SRC = str(Path(proctor.__file__).resolve().parents[1])
N = 40


def _command(data: Path, base_url: str, out: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "proctor", "run", "bfcl-simple", "--data-file", str(data), "--prompt",
            "function-calling", "--model", "openai:scripted", "--base-url", base_url, "--concurrency", "4",
            "-o", str(out), "--store", str(store), "--no-progress", "--no-history"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _data(folder: Path) -> Path:
    doc = {"name": "geo.area", "description": "Area.", "parameters": {
        "type": "dict", "properties": {"base": {"type": "integer", "description": "B."}}, "required": ["base"]}}
    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Area {i}?"}]],
                  "function": [doc]} for i in range(N)]
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"geo.area": {"base": [i % 3]}}]} for i in range(N)]
    return write(folder, "simple_python", questions, answers)


@pytest.mark.long
def test_sigkill_mid_run_then_resume_loses_no_finished_sample(tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test-not-a-secret"}
    script = [[{"name": "geo_area", "arguments": {"base": 1}}]]
    with serve(tool_replies=script, latency=0.05) as srv:
        out, store = tmp_path / "run", tmp_path / "store.sqlite"
        proc = subprocess.Popen(_command(data, srv.base_url, out, store), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while _lines(out / "samples.jsonl") < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
        assert 12 <= len(finished) < N, "the kill must land mid-run"
        assert all(s["trajectory"]["stop"] == "called" for s in finished)  # each finished sample whole
        first = srv.stats()["by_path"].get("/v1/chat/completions", 0)
        # only the trajectories in flight are lost: 4 requests, and those answered while their samples were written
        assert first - len(finished) <= 8

        srv.reset()
        done = subprocess.run(_command(data, srv.base_url, out, store), env=env, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr
        second = srv.stats()["by_path"].get("/v1/chat/completions", 0)
        assert second <= N - len(finished)  # no finished sample is asked again
        resumed = proctor.read_run(out)
        assert len(resumed.samples) == N and resumed.results is not None
        kept = {s.sample_id: s for s in resumed.samples}
        assert all(kept[s["sample_id"]].trajectory is not None for s in finished)

        srv.reset()
        clean = subprocess.run(_command(data, srv.base_url, tmp_path / "clean", tmp_path / "other.sqlite"),
                               env=env, capture_output=True, text=True, check=False)
        assert clean.returncode == 0, clean.stderr
    clean_results = proctor.read_run(tmp_path / "clean").results
    assert clean_results is not None
    keys = ("accuracy", "n", "n_scored", "agent_stops", "agent_stop_rates", "n_truncated")
    assert {k: getattr(clean_results.overall, k) for k in keys} == {k: getattr(resumed.results.overall, k)
                                                                   for k in keys}
    assert resumed.results.overall.accuracy == pytest.approx(sum(i % 3 == 1 for i in range(N)) / N)


class Counting(ModelBase):
    """Calls `add` on every turn until it has read `answer_after` results; counts what it was asked."""

    capabilities = frozenset({Capability.GENERATE, Capability.TOOLS})

    def __init__(self, answer_after: int, fail_at: int | None = None) -> None:
        self.name, self.answer_after, self.fail_at, self.asked = "counting", answer_after, fail_at, 0

    def identity(self) -> dict[str, str]:
        return {"backend": "counting"}

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        out = []
        for r in requests:
            self.asked += 1
            read = sum(m.role == "tool" for m in r.messages)
            if self.fail_at is not None and read == self.fail_at:
                out.append(Generation(error="the server went away"))  # the run dies here: the turn is not kept
            elif read >= self.answer_after:
                out.append(Generation(text=f"total after {read}", input_tokens=5, output_tokens=2))
            else:
                out.append(Generation(tool_calls=(ToolCall(f"c{read}", "add", json.dumps({"a": read})),),
                                      input_tokens=5, output_tokens=2))
        return out


def _add(a: int) -> int:
    return a + 1


class Prompts:
    kinds = ("tools",)
    agent_kinds = ("tools",)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("user", item.prompt),)

    def agent_task(self, item: Item, kind: str) -> AgentTask:
        return AgentTask(self.messages(item, kind), tools=(python_tool(_add, name="add"),))

    def template_hash(self, kind: str) -> str:
        return "h"


RULE = AnswerRule("answered", "grader", "here", read=lambda text: Extraction(None, "none"),
                  score_trajectory=lambda item, t: score_item(item, t.answer or ""))


def test_an_unfinished_trajectory_resumes_from_its_start_its_turns_from_the_cache(tmp_path: Path) -> None:
    item = Item(identifier="t.1", modality=Modality.SINGLE_VALUE,
                prompt="add up", response="total after 3")
    task = Task(name="t", items=[item], prompts=Prompts(), answer_rules={"tools": RULE})  # type: ignore[arg-type]
    scorer = AgentScorer("tools")
    store = Store(tmp_path / "store.sqlite")
    dying = Counting(answer_after=3, fail_at=2)  # two turns made (and cached), then the request fails
    [broken] = asyncio.run(score_chunk(task, CachedModel(dying, store), scorer, [(item, 0)]))
    assert broken.outcome.value == "error" and broken.trajectory is not None and len(broken.trajectory.turns) == 3
    again = Counting(answer_after=3)
    [whole] = asyncio.run(score_chunk(task, CachedModel(again, store), scorer, [(item, 0)]))
    assert whole.trajectory is not None and whole.trajectory.stop == "answered"
    assert [t.cached for t in whole.trajectory.turns] == [True, True, False, False]
    assert again.asked == 2 and whole.cached_requests == 2  # the two turns made before came from the cache
    assert whole.outcome.value == "correct"
