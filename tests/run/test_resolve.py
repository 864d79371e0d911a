"""resolve(): a benchmark's defaults applied once — budget, kind stops, answer rule, no-answer policy, hash."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from proctor.benchmarks.registry import load_task
from proctor.run.resolve import DEFAULT_MAX_TOKENS, resolve
from proctor.run.spec import DatasetRef, GenerationSpec, ModelSpec, RunSpec, ScorerSpec
from proctor.scoring.extract import ANSWER_RULES

ROOT = Path(__file__).resolve().parents[2]
MMLU = ROOT / "tests" / "fixtures" / "upstream" / "mmlu_pro"


def _spec(**scorer: object) -> RunSpec:
    return RunSpec(dataset=DatasetRef(name="mmlu-pro", data_file=str(MMLU), limit=2),
                   model=ModelSpec(spec="scripted:first"), scorer=ScorerSpec(**scorer))  # type: ignore[arg-type]


def test_the_benchmark_fills_what_the_spec_leaves_out() -> None:
    task = load_task("mmlu-pro", data_file=MMLU, limit=2)
    spec = resolve(_spec(prompt_kind="tiger-local"), task)
    assert spec.resolved and spec.dataset.content_hash == task.content_hash
    assert spec.scorer.answer_rule == "tiger-lab-mmlu-pro-local" and spec.scorer.extractor_version
    assert "Question:" in spec.generation.stop
    assert resolve(_spec(), task).generation.max_tokens == task.default_max_tokens  # the benchmark's budget
    given = _spec().model_copy(update={"generation": GenerationSpec(max_tokens=7, stop=("X",))})
    assert resolve(given, task).generation.max_tokens == 7  # given wins
    mc = str(ROOT / "examples" / "items" / "multiple-choice.jsonl")  # no benchmark, no kind budget
    items = RunSpec(dataset=DatasetRef(name=mc), model=ModelSpec(spec="scripted:first"))
    assert resolve(items).generation.max_tokens == DEFAULT_MAX_TOKENS


def test_the_no_answer_policy_is_the_answer_rules_unless_given() -> None:
    task = load_task("mmlu-pro", data_file=MMLU, limit=2)
    for kind in ("five_shot", "tiger-api", "tiger-local"):  # TIGER-Lab's scripts count an unread reply as a guess
        assert resolve(_spec(prompt_kind=kind), task).scorer.no_answer == "guess"
        assert resolve(_spec(prompt_kind=kind, no_answer="wrong"), task).scorer.no_answer == "wrong"  # given wins
        assert resolve(_spec(prompt_kind=kind, extract="robust"), task).scorer.no_answer == "wrong"  # proctor's reads
    assert resolve(_spec(prompt_kind="lm-eval"), task).scorer.no_answer == "wrong"  # lm-eval's: no match, wrong
    assert resolve(_spec(prompt_kind="zero_shot"), task).scorer.no_answer == "wrong"  # proctor's own kind
    wrong = replace(ANSWER_RULES["tiger-lab-mmlu-pro"], no_answer="wrong")  # the policy is the rule's own
    strict = replace(task, answer_rules={**task.answer_rules, "five_shot": wrong})
    assert resolve(_spec(prompt_kind="five_shot"), strict).scorer.no_answer == "wrong"
    ids = {resolve(_spec(prompt_kind="five_shot", no_answer=p), task).run_id() for p in ("wrong", "guess")}
    assert len(ids) == 2
