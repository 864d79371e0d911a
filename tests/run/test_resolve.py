"""resolve(): a benchmark's defaults applied once — budget, kind stops, answer rule, no-answer policy, hash."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from proctor.benchmarks import hle, simpleqa_verified
from proctor.benchmarks.registry import load_task
from proctor.core.spec import DatasetRef, GenerationSpec, JudgeSpec, ModelSpec, RunSpec, ScorerSpec
from proctor.run.build import build_spec, eval_options
from proctor.run.resolve import DEFAULT_MAX_TOKENS, resolve
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


@pytest.mark.parametrize(("temperature", "max_tokens"), [(None, None), (0.3, None), (None, 512), (0.7, 64)])
def test_a_generic_judges_settings_and_run_id_are_those_of_before(temperature: float | None,
                                                                  max_tokens: int | None) -> None:
    """The CLI now stores only the judge settings given and resolve fills the rest once (a benchmark judge's
    declared sampling, else proctor's greedy 1,024): for the generic judge that resolves to what the CLI used
    to store itself (both fields, proctor's defaults for the one not given; None when neither), same run id."""
    task = load_task("mmlu-pro", data_file=MMLU, limit=2)
    options = eval_options(data_file=MMLU, limit=2, judge="scripted:first", judge_temperature=temperature,
                           judge_max_tokens=max_tokens)
    new = resolve(build_spec("mmlu-pro", "scripted:first", options), task)
    given = temperature is not None or max_tokens is not None
    before = GenerationSpec(temperature=temperature if temperature is not None else 0.0,
                            max_tokens=max_tokens or 1024) if given else None  # what build.py stored before
    old = build_spec("mmlu-pro", "scripted:first", options)
    assert old.judge is not None
    old = old.model_copy(update={"judge": old.judge.model_copy(update={"settings": before})})
    assert new.judge is not None and new.judge.settings == before
    assert new.run_id() == resolve(old, task).run_id()
    assert resolve(new, task).run_id() == new.run_id()  # resolved once: a second resolve changes nothing


def test_a_benchmark_judges_declared_settings_fill_what_the_user_left_out() -> None:
    """A spec (a --config file, Python) that sets one judge field keeps it; the others are the benchmark's."""
    data = ROOT / "tests" / "fixtures" / "upstream" / "simpleqa_verified" / "eval.jsonl"
    task = load_task("simpleqa-verified", data_file=data, limit=2)
    spec = RunSpec(dataset=DatasetRef(name="simpleqa-verified", data_file=str(data), limit=2),
                   model=ModelSpec(spec="scripted:first"),
                   judge=JudgeSpec(model="scripted:first", settings=GenerationSpec.model_validate({"max_tokens": 9})))
    settings = resolve(spec, task).judge.settings  # type: ignore[union-attr]
    assert settings is not None and (settings.temperature, settings.max_tokens) == (0.5, 9)
    default = resolve(spec.model_copy(update={"judge": JudgeSpec(model="scripted:first")}), task).judge
    assert default is not None and default.settings is not None
    assert (default.settings.temperature, default.settings.max_tokens) == (0.5, 2048)


@pytest.mark.parametrize(("benchmark", "fixture"), [("simpleqa-verified", "simpleqa_verified/eval.jsonl"),
                                                     ("hle", "hle/test.jsonl")])
def test_a_benchmark_judges_template_is_in_the_run_id(benchmark: str, fixture: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte more in the judge's prompt template is another run id (its sha256 is in the prompt hash)."""
    module = {"simpleqa-verified": simpleqa_verified, "hle": hle}[benchmark]
    data = ROOT / "tests" / "fixtures" / "upstream" / fixture
    spec = RunSpec(dataset=DatasetRef(name=benchmark, data_file=str(data), limit=2),
                   model=ModelSpec(spec="scripted:first"), judge=JudgeSpec(model="scripted:first"))
    before = resolve(spec, load_task(benchmark, data_file=data, limit=2))
    monkeypatch.setattr(module, "JUDGE", replace(module.JUDGE, template=module.JUDGE.template + " "))
    after = resolve(spec, load_task(benchmark, data_file=data, limit=2))
    assert before.dataset.prompt_hash != after.dataset.prompt_hash and before.run_id() != after.run_id()
