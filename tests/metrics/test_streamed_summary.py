"""#40 item 2: `summarize` reads its samples once (each metric's `tally`), so a run read one sample at a time from
disk is summarized as the same samples held, to the last digit, on varied runs: clusters, epochs, graded scores,
both no-answer policies, both truncation policies, errors, calibration, acc_norm, answer reading levels, judge
agreement, cost, text overlap, IFEval, SimpleQA and HLE; a plugin without a tally is given its samples; a metric
that fails fails alone. Each built-in metric's `compute` is its tally fed the samples (`metrics.base.Tallied`):
one implementation (checked below for every built-in)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from proctor.core.money import Money
from proctor.core.results import MetricValue
from proctor.log.runlog import (
    ChoiceDetails,
    GenerationDetails,
    InstructionCheck,
    JudgeCheck,
    JudgeDetails,
    JudgeUsage,
    Manifest,
    Outcome,
    Reading,
    Readings,
    Sample,
    SuiteDetails,
    append_samples,
    iter_run_samples,
    write_manifest,
)
from proctor.metrics import RunContext, register, unregister
from proctor.metrics.base import Tallied
from proctor.metrics.builtin import BUILTIN
from proctor.metrics.results import read_run, summarize

CATEGORIES = ("law", "math", "physics", None)
OUTCOMES = (Outcome.CORRECT, Outcome.WRONG, Outcome.NO_ANSWER, Outcome.TRUNCATED, Outcome.ERROR, Outcome.UNSCORED)


def _details(rng: random.Random, kind: str, outcome: Outcome, score: float | None) -> Any:
    """Details of the scorer `kind`, carrying what the metrics read (each on some samples only)."""
    if kind == "choice":
        dist = [rng.random() for _ in range(4)]
        dist = [x / sum(dist) for x in dist]
        if rng.random() < 0.5:  # a probsem context: a distribution over its queries and the expected one
            return SuiteDetails(queries=list("abcd"), expected=rng.randint(0, 3), distribution=dist)
        return ChoiceDetails(distribution=dict(zip("ABCD", dist, strict=True)), acc_norm_correct=rng.random() < 0.5)
    if kind == "judge":
        version = rng.choice(["simple-evals-simpleqa", "hle-judge", None])
        return JudgeDetails(judge_version=version, judge_grade=rng.choice("ABC"), p_correct=rng.random(),
                            judge_usage=JudgeUsage(input_tokens=rng.randint(1, 500), output_tokens=rng.randint(1, 50)),
                            token_f1=rng.random() if rng.random() < 0.5 else None, rougeL=rng.random())
    level = rng.choice([1, 2, 3, None])
    answer = None if level is None else "A"
    ref_score = (1.0 if rng.random() < 0.5 else 0.0) if answer else None
    readings = Readings(reference=Reading(reader="tiger-lab-mmlu-pro", rule="r", answer=answer, score=ref_score,
                                          level=level),
                        robust=Reading(reader="proctor", rule="r", answer=answer, score=rng.random() < 0.5))
    check = JudgeCheck(outcome=rng.choice([Outcome.CORRECT, Outcome.WRONG]), details=JudgeDetails(
        judge_usage=JudgeUsage(input_tokens=10, output_tokens=2))) if rng.random() < 0.1 else None
    instructions = [InstructionCheck(id=f"i{j}", strict=rng.random() < 0.5, loose=rng.random() < 0.7)
                    for j in range(rng.randint(1, 3))] if rng.random() < 0.3 else None
    return GenerationDetails(readings=readings if rng.random() < 0.8 else None, judge_check=check,
                             p_correct=rng.random() if rng.random() < 0.3 else None, instructions=instructions)


def _run(seed: int, epochs: int, kind: str, graded: bool) -> list[Sample]:
    """A run of 60 items × `epochs` with every outcome, categories, clusters and latencies, in a shuffled order."""
    rng = random.Random(seed)
    samples = []
    for i in range(60):
        category = CATEGORIES[i % len(CATEGORIES)]
        for e in range(epochs):
            outcome = rng.choices(OUTCOMES, weights=(5, 4, 1, 1, 1, 1))[0]
            score = {Outcome.CORRECT: 1.0, Outcome.WRONG: 0.0, Outcome.NO_ANSWER: 0.0,
                     Outcome.TRUNCATED: 0.0}.get(outcome)
            if graded and outcome in (Outcome.CORRECT, Outcome.WRONG) and rng.random() < 0.4:
                outcome, score = Outcome.PARTIAL, rng.choice([0.25, 0.5, 0.1 + rng.random() * 0.8])
            samples.append(Sample(
                sample_id=f"q{i}#{e}", item_id=f"q{i}", epoch=e, dataset="d", category=category,
                subcategory=f"{category}-{i % 3}" if category else None, modality=rng.choice(["choiceof4", None]),
                difficulty=rng.random() if rng.random() < 0.5 else None, outcome=outcome, score=score,
                error="HTTP 500" if outcome is Outcome.ERROR and rng.random() < 0.5 else None,
                input_tokens=rng.randint(10, 900) if rng.random() < 0.9 else None, output_tokens=rng.randint(1, 90),
                latency_s=rng.random() if rng.random() < 0.8 else None, cluster=f"src{i // 6}" if i % 10 else None,
                prompt=f"question {i}", details=_details(rng, kind, outcome, score)))
    rng.shuffle(samples)
    return samples


def _manifest(cluster: str | None, priced: bool, judged: bool) -> Manifest:
    price = Money(input=Decimal("1.25"), output=Decimal(3)).model_dump(mode="json") if priced else None
    return Manifest(run_id="r", proctor_version="test", dataset={"name": "d"}, model={"spec": "m"}, mode="generate",
                    started_at="2026-01-01T00:00:00+00:00", cluster=cluster, price=price,
                    judge={"spec": "j"} if judged else None, judge_price=price if judged else None)


def _both(samples: Sequence[Sample], **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summary of the samples held (a list) and of the samples given once (an iterator)."""
    return summarize(samples, **kw).as_dict(), summarize(iter(samples), **kw).as_dict()


CASES = [(seed, epochs, kind, graded, cluster)
         for seed, (epochs, kind, graded, cluster) in enumerate([
             (1, "generation", False, None), (3, "generation", False, "metadata.src"), (3, "generation", True, None),
             (1, "choice", False, "category"), (4, "choice", False, "metadata.src"), (2, "judge", True, "metadata.src"),
             (1, "judge", True, None), (5, "generation", True, "subcategory"), (2, "generation", False, None)])]


@pytest.mark.parametrize(("seed", "epochs", "kind", "graded", "cluster"), CASES)
@pytest.mark.parametrize("truncated_as", ["wrong", "excluded"])
@pytest.mark.parametrize("no_answer", ["wrong", "guess"])
def test_the_streamed_summary_equals_the_held_one_to_the_last_digit(
        seed: int, epochs: int, kind: str, graded: bool, cluster: str | None, truncated_as: str, no_answer: str) -> None:
    samples = _run(seed, epochs, kind, graded)
    manifest = _manifest(cluster, priced=seed % 2 == 0, judged=kind == "judge")
    held, streamed = _both(samples, seed=seed, truncated_as=truncated_as, no_answer=no_answer, extract="reference",
                           manifest=manifest)
    assert streamed == held  # exact: every float to the last digit
    filled = {k for k, v in held.items() if v not in (None, {}, [])}
    assert {"overall", "by_category", "errors"} <= filled  # the cases exercise what they claim to
    if epochs > 1:
        assert "epochs" in filled
    if cluster == "metadata.src":
        assert held["overall"]["n_clusters"] > 1
    if kind == "choice":
        assert {"calibration", "acc_norm"} <= filled
    if kind == "generation":
        assert {"answer_reading", "judge_agreement", "calibration"} <= filled
        assert "ifeval_prompt_level_strict_acc" in held["metrics"]
    if kind == "judge":
        assert {"simpleqa_f1", "hle_calibration_error", "hle_accuracy_authors", "token_f1", "rougeL"} <= set(
            held["metrics"])
    if seed % 2 == 0:
        assert "cost" in filled and (kind != "judge" or held["cost"]["judge_priced_calls"])


def test_cases_cover_every_interval_method() -> None:
    methods = set()
    for seed, epochs, kind, graded, cluster in CASES:
        held = summarize(_run(seed, epochs, kind, graded), manifest=_manifest(cluster, False, False))
        methods |= {held.overall.ci_method} | {b.ci_method for b in held.by_category.values()}
    assert {"wilson", "clustered_wilson", "bootstrap", "cluster_bootstrap", "cluster_wilson"} <= methods


def test_a_run_read_back_from_disk_streams_to_the_results_it_holds(tmp_path: Path) -> None:
    """Through samples.jsonl: a retried sample (a later record of its id) replaces the first, in the order
    `read_run` gives; the summary of the streamed samples equals the summary of the samples read whole."""
    samples = _run(3, 3, "generation", True)
    manifest = _manifest("metadata.src", priced=True, judged=False)
    write_manifest(tmp_path, manifest)
    append_samples(tmp_path / "samples.jsonl", samples)
    retried = [s.model_copy(update={"outcome": Outcome.CORRECT, "score": 1.0, "error": None})
               for s in samples if s.outcome is Outcome.ERROR][:3]
    append_samples(tmp_path / "samples.jsonl", retried)
    whole = read_run(tmp_path).samples
    kw: dict[str, Any] = {"truncated_as": "excluded", "no_answer": "guess", "manifest": manifest}
    assert summarize(iter_run_samples(tmp_path), **kw).as_dict() == summarize(whole, **kw).as_dict()


class _Mean:
    """A plugin metric without `tally`: the streamed summary gives it its samples held."""

    name, label, needs = "plugin_mean", "plugin mean", frozenset({"score"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricValue:
        for s in samples:
            s.score = 0.0  # a plugin that writes to its samples changes nothing of the others' results
        return MetricValue(value=float(len(samples)), n=len(samples))


class _Broken(_Mean):
    name = "plugin_broken"

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricValue:
        raise ZeroDivisionError("division by zero")


def test_a_plugin_without_a_tally_and_a_failing_one_read_the_same_streamed(caplog: pytest.LogCaptureFixture) -> None:
    register(_Mean())
    register(_Broken())
    try:
        held, streamed = _both(_run(1, 2, "generation", False))
    finally:
        unregister("plugin_mean")
        unregister("plugin_broken")
    assert streamed == held
    assert held["metrics"]["plugin_mean"]["value"] == 120.0 and held["overall"]["accuracy"] > 0
    assert held["metrics"]["plugin_broken"]["error"] == "ZeroDivisionError: division by zero"
    assert caplog.text.count("metric 'plugin_broken' failed") == 2  # once a summary


def test_a_bad_policy_is_refused_before_anything_is_read() -> None:
    def never() -> Any:
        raise AssertionError("read")
        yield

    with pytest.raises(ValueError, match="truncated_as must be"):
        summarize(never(), truncated_as="right")
    with pytest.raises(ValueError, match="no_answer must be"):
        summarize(never(), no_answer="skip")


def test_every_builtin_metric_is_computed_by_its_tally_alone() -> None:
    """No built-in keeps a second implementation beside its tally: its `compute` is `Tallied.compute`."""
    assert BUILTIN and all(isinstance(m, Tallied) and type(m).compute is Tallied.compute for m in BUILTIN), [
        m.name for m in BUILTIN if not isinstance(m, Tallied) or type(m).compute is not Tallied.compute]
