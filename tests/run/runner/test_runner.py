"""The runner: scoring, the run log, errors never scored, crash-safe resume, refusals before start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.core.model import Capability
from proctor.data.tasks import Task
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.util.errors import CapabilityError, ProctorError

from .conftest import CountingModel, run_with


def _config(tmp_path: Path, **kw: object) -> dict[str, object]:
    base: dict[str, object] = {"out": tmp_path / "run", "store": tmp_path / "store.sqlite", "progress": False,
                               "chunk_size": 8}
    return base | {("out" if k == "out_dir" else k): v for k, v in kw.items()}


def test_generate_run_scores_and_logs(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    model = CountingModel(gold)
    log = run_with(task, model, **_config(tmp_path))
    assert len(log.samples) == 40
    # even items answer the gold letter; odd items answer A, which is gold for i % 4 == 0 only (none odd)
    expected = sum(1 for i in range(40) if i % 2 == 0) / 40
    assert log.results is not None
    assert log.results.overall.accuracy == pytest.approx(expected)
    assert log.results.overall.ci_low < expected < log.results.overall.ci_high
    assert set(log.results.by_category) == {"math", "law"}
    s = log.samples[0]
    assert s.extraction_rule and s.extracted in "ABCD" and s.raw_output
    m = log.manifest
    assert m.dataset.content_hash and m.dataset.content_hash.startswith("sha256:") and m.extractor_version and m.finished_at
    assert m.prompt_template_hash and m.provenance.host.python and m.provenance.backend.spec == m.model.spec
    assert m.elapsed_s is not None and 0 < m.elapsed_s < 60
    text = (log.path / "manifest.json").read_text()
    assert "FAKE_KEY" in text  # the *name* of the env var is provenance; the value never is


def test_errors_are_recorded_not_scored_and_retried(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    flaky = CountingModel(gold, fail_on=["q-3 ", "q-7 "])
    log = run_with(task, flaky, **_config(tmp_path))
    errors = [s for s in log.samples if s.outcome is Outcome.ERROR]
    assert {s.item_id for s in errors} == {"q-3", "q-7"}
    assert all(s.score is None for s in errors)
    assert log.results is not None and log.results.overall.n_errors == 2
    assert log.results.overall.n_scored == 38
    healthy = CountingModel(gold)
    log2 = run_with(task, healthy, **_config(tmp_path))
    assert healthy.requests == 2  # only the two errored samples are asked again
    assert all(s.outcome is not Outcome.ERROR for s in log2.samples) and len(log2.samples) == 40


def test_crash_mid_run_resumes_without_repeating(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    crashing = CountingModel(gold, crash_after=2)
    with pytest.raises(RuntimeError):
        run_with(task, crashing, **_config(tmp_path, use_cache=False, chunk_size=8))
    done = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(done) == 16
    resumed = CountingModel(gold)
    log = run_with(task, resumed, **_config(tmp_path, use_cache=False, chunk_size=8))
    assert resumed.requests == 40 - 16
    fresh = run_with(task, CountingModel(gold), **_config(tmp_path / "b", use_cache=False))
    assert log.results is not None and fresh.results is not None
    assert log.results.overall == fresh.results.overall


def test_second_run_is_answered_by_the_cache(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    run_with(task, CountingModel(gold), **_config(tmp_path))
    again = CountingModel(gold)
    run_with(task, again, **_config(tmp_path, out_dir=tmp_path / "other"))
    assert again.requests == 0


def test_logprob_mode(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    model = CountingModel(gold)
    log = run_with(task, model, **_config(tmp_path, mode="logprob"))
    assert model.requests == 40 * 4
    # the fake prefers the shortest continuation: " beta" (B) and " alpha"/" gamma"/" delta" tie-free? B is shortest
    assert all(s.extracted == "B" for s in log.samples)
    assert log.results is not None and log.results.acc_norm is not None
    assert log.manifest.mode == "logprob"


def test_refuses_before_start(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    model = CountingModel(gold)
    model.capabilities = frozenset({Capability.GENERATE})
    with pytest.raises(CapabilityError, match="loglikelihood"):
        run_with(task, model, **_config(tmp_path, mode="logprob"))
    assert model.calls == 0 and not (tmp_path / "run").exists()
    with pytest.raises(ProctorError, match="no prompt"):
        run_with(task, model, **_config(tmp_path, prompt_kind="five_shot"))


def test_other_run_in_same_dir_is_refused(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    run_with(task, CountingModel(gold), **_config(tmp_path))
    with pytest.raises(ProctorError, match="different run"):
        run_with(task, CountingModel(gold), **_config(tmp_path, epochs=2))


def test_read_back_needs_no_model(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    log = run_with(task, CountingModel(gold), **_config(tmp_path))
    again = read_run(log.path)
    assert again.results == log.results and len(again.samples) == 40


class _AlwaysCorrectJudge(CountingModel):
    async def generate(self, requests):  # type: ignore[no-untyped-def]
        from proctor.core.model import Generation

        self.requests += len(requests)
        return [Generation(text="Matches the reference.\nGRADE: CORRECT") for _ in requests]


def test_judge_agreement_is_reported(tmp_path: Path, task: Task, gold: dict[str, str]) -> None:
    judge = _AlwaysCorrectJudge(gold)
    judge.name = "fake:judge"
    log = run_with(task, CountingModel(gold), **_config(tmp_path, judge=judge, judge_agreement=10))
    assert judge.requests == 10
    assert log.results is not None
    agreement = log.results.judge_agreement
    # items 0..9: the even ones are answered correctly, so an always-CORRECT judge agrees on half
    assert agreement.n == 10 and agreement.agreement == pytest.approx(0.5)
    checked = [s for s in log.samples if "judge_check" in s.details]
    assert len(checked) == 10 and all(s.details["judge_check"].outcome == "correct" for s in checked)


def test_logprob_mode_scores_boolean_items_over_their_closed_set(tmp_path: Path, gold: dict[str, str]) -> None:
    from proctor.data.records import Item, Modality

    from .conftest import LetterPrompts

    items = [Item(identifier=f"b-{i}", modality=Modality.BOOLEAN, prompt=f"b-{i} Is it?", response=i % 2 == 0)
             for i in range(6)]
    task = Task(name="bools", items=items, prompts=LetterPrompts(), source={"source": "test"})
    model = CountingModel(gold)
    log = run_with(task, model, **_config(tmp_path, mode="logprob"))
    assert model.requests == 6 * 2  # " True" and " False" for each item
    # the fake prefers the shorter continuation: " True"; items with response True are correct
    assert [s.extracted for s in log.samples] == ["True"] * 6
    assert [s.outcome for s in log.samples] == [Outcome.CORRECT, Outcome.WRONG] * 3


class _SlowCounting(CountingModel):
    """Counts the samples handed over and not yet answered: what the dispatch holds at once."""

    def __init__(self, gold: dict[str, str], size: int) -> None:
        super().__init__(gold)
        self.preferred_chunk_size = size
        self.open = self.most_open = 0

    async def generate(self, requests):  # type: ignore[no-untyped-def]
        import asyncio

        self.open += len(requests)
        self.most_open = max(self.most_open, self.open)
        await asyncio.sleep(0.01)  # every chunk the window started is waiting here at once
        self.open -= len(requests)
        return await super().generate(requests)


@pytest.mark.parametrize(("size", "most"), [(8, 32), (1, 20)])
def test_the_dispatch_holds_a_bounded_number_of_samples_whatever_the_chunk_size(
    task: Task, gold: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, most: int
) -> None:
    """Chunks of 8 start at most `WINDOW_SAMPLES` samples at once (a local backend's chunks of 256 were the whole
    plan: #40); chunks of one, up to `WINDOW` chunks; every sample is still answered once."""
    from proctor.run import runner

    monkeypatch.setattr(runner, "WINDOW_SAMPLES", 32)
    monkeypatch.setattr(runner, "WINDOW", 20)
    model = _SlowCounting(gold, size)
    log = run_with(task, model, out=tmp_path / "run", use_cache=False, record_history=False, progress=False,
                   epochs=2)
    assert model.most_open == most
    assert model.requests == 80 and len(log.samples) == 80
