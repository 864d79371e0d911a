"""Fail fast and loud: a failure that hits every request stops the run with one message (exit 2); at the
end of a run the distinct errors are shown with counts, and too many errors exit non-zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import proctor
from proctor.cli import main
from proctor.core.model import Capability, GenerateRequest, Generation, ModelBase
from proctor.data.prompts import ItemPromptBuilder
from proctor.data.records import Item
from proctor.data.tasks import Task
from proctor.log.runlog import Outcome

from .conftest import make_items, run_with


def _data(tmp_path: Path, n: int) -> Path:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(it.to_json()) + "\n" for it in make_items(n)))
    return data


@pytest.fixture
def server() -> object:
    pytest.importorskip("uvicorn")
    from proctor.testing import serve

    with serve(responder="first") as srv:
        yield srv


def test_bad_key_stops_after_the_first_answers(server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    server.configure(api_key="right")  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    args = ["run", str(_data(tmp_path, 200)), "--model", "openai:m", "--base-url", server.base_url,  # type: ignore[attr-defined]
            "--concurrency", "2", "-o", str(tmp_path / "run"), "--no-cache", "--no-history", "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err
    shown = err.replace(server.base_url, "<server>").replace(str(tmp_path), "<tmp>")  # type: ignore[attr-defined]
    assert "the first 8 answers all failed" in shown and shown.count("401") == 1  # a port may hold "401" too
    asked = server.stats()["requests"]  # type: ignore[attr-defined]
    assert asked < 20  # stopped after the first answers, not 200 requests


def test_error_summary_and_max_error_rate(server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    server.configure(poison="q-1 ")  # type: ignore[attr-defined]  # item q-1 fails (HTTP 500)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    base = ["run", str(_data(tmp_path, 40)), "--model", "openai:m", "--base-url", server.base_url,  # type: ignore[attr-defined]
            "--max-retries", "0", "--no-cache", "--no-history", "--no-progress"]
    assert main([*base, "-o", str(tmp_path / "a"), "--max-error-rate", "0"]) == 1  # 1 of 40 > 0
    err = capsys.readouterr().err
    assert "1 ×" in err and "HTTP 500" in err and "--max-error-rate" in err
    results = proctor.read_run(tmp_path / "a").results
    assert results is not None
    assert sum(results.errors.values()) == results.overall.n_errors == 1
    assert main([*base, "-o", str(tmp_path / "a"), "--max-error-rate", "0.1"]) == 0  # the default: 1 of 40 is fine


class FailingJudge(ModelBase):
    name, capabilities = "fake:judge", frozenset({Capability.GENERATE})

    async def generate(self, requests: list[GenerateRequest]) -> list[Generation]:  # type: ignore[override]
        return [Generation(error="HTTP 401 from the judge") for _ in requests]


class Answering(ModelBase):
    name, capabilities = "fake:answers", frozenset({Capability.GENERATE})

    async def generate(self, requests: list[GenerateRequest]) -> list[Generation]:  # type: ignore[override]
        return [Generation(text="Love is patient.") for _ in requests]


def test_judge_failure_is_an_error_on_the_sample(tmp_path: Path) -> None:
    items = [Item(identifier=f"p{i}", modality="short-prose", prompt="What is love?", response="patient")
             for i in range(3)]
    config = {"judge": FailingJudge(), "out": tmp_path / "r", "use_cache": False, "record_history": False,
                       "progress": False, "fail_fast_after": 0}
    log = run_with(Task("prose", items, ItemPromptBuilder()), Answering(), **config)
    message = "judge fake:judge could not grade the answer: HTTP 401 from the judge"  # names who failed
    assert all(s.outcome is Outcome.ERROR and s.error == message for s in log.samples)
    assert log.results is not None and log.results.errors == {message: 3}


class Closing(Answering):
    closed = 0

    async def aclose(self) -> None:
        type(self).closed += 1


def test_aclose_is_called_at_the_end_of_every_run(tmp_path: Path) -> None:
    items = [Item(identifier="s1", modality="single-value", prompt="2+2?", response="4")]
    task = Task("t", items, ItemPromptBuilder())
    config = {"out": tmp_path / "r", "use_cache": False, "record_history": False, "progress": False}
    run_with(task, Closing(), **config)
    assert Closing.closed == 1
    with pytest.raises(proctor.ProctorError):  # refused after the model was built: still closed
        run_with(task, Closing(), out=tmp_path / "r", progress=False, prompt_kind="five_shot")
    assert Closing.closed == 2
