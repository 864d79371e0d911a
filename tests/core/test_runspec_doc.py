"""docs/runspec.md has one row per RunSpec field (walked recursively), and each row's run id / label /
comparability cells are what the code does: the field changed alone changes (or leaves) the run id, the setting
label and the comparability of two runs (#36 item 5: the next setting cannot be dropped silently)."""

from __future__ import annotations

import dataclasses
import typing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from proctor.analysis.comparable import not_comparable
from proctor.core.spec import (
    AgentLimits,
    Budget,
    DatasetRef,
    GenerationSpec,
    HumanLabels,
    JudgeSpec,
    ModelSpec,
    Money,
    RetryOf,
    RunSpec,
    ScorerSpec,
    ShardSpec,
    StopRule,
)
from proctor.log.setting import setting_key, setting_label, spec_setting
from proctor.run.store import RunRecord

DOC = Path(__file__).parents[2] / "docs" / "runspec.md"


def _rows() -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    for line in DOC.read_text().splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            assert len(cells) == 5, line
            name = cells[0].strip("`")
            assert name not in rows, f"two rows for {name}"
            rows[name] = {"run id": cells[2], "label": cells[3], "comparable": cells[4]}
    return rows


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The record type a field holds (`JudgeSpec | None` → JudgeSpec), or None for a plain value."""
    for arg in (annotation, *typing.get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every field path of `model`, records entered: `dataset.name`, …, `judge.settings`, `judge.settings.seed`."""
    out = []
    for name, info in model.model_fields.items():
        path = prefix + name
        out.append(path)
        inner = _model_of(info.annotation)
        if inner is not None:
            out += _fields(inner, path + ".")
    return out


def _covered(path: str, rows: dict[str, Any]) -> bool:
    parts = path.split(".")
    return any(".".join(parts[:i]) in rows for i in range(1, len(parts) + 1))


def _is_record(path: str) -> bool:
    parts = path.split(".")
    model: type[BaseModel] | None = RunSpec
    for p in parts:
        assert model is not None
        model = _model_of(model.model_fields[p].annotation)
    return model is not None


def test_every_runspec_field_has_a_row_and_every_row_a_field() -> None:
    rows, fields = _rows(), _fields(RunSpec)
    missing = [f for f in fields if not _covered(f, rows) and not _is_record(f)]
    assert missing == [], f"docs/runspec.md has no row for {missing}"
    assert [r for r in rows if r not in fields] == [], "docs/runspec.md names fields RunSpec does not have"
    for name, cells in rows.items():
        assert {cells["label"], cells["comparable"]} <= {"yes", "no"}, name


BASE = RunSpec(dataset=DatasetRef(name="quiz", content_hash="sha256:items"), model=ModelSpec(spec="scripted:first"),
               scorer=ScorerSpec(mode="generate", prompt_kind="zero_shot", extract="reference", no_answer="wrong",
                                 extractor_version="proctor-extract/2"),
               generation=GenerationSpec(max_tokens=1024), cluster="none", resolved=True)
JUDGE = JudgeSpec(model="scripted:first", version="2")
MONEY = Money(input=Decimal(1), output=Decimal(2))
# each row's field, changed alone (a field under `judge.` is changed on BASE with a judge)
CHANGED: dict[str, Any] = {
    "dataset.name": "other", "dataset.data_file": "copy.jsonl", "dataset.files": ("b.json",),
    "dataset.revision": "abc", "dataset.content_hash": "sha256:other", "dataset.seed": 7, "dataset.limit": 3,
    "dataset.limit_per_category": 2, "dataset.subjects": ("law",), "dataset.prompt_options": {"instruction": "x"},
    "dataset.hf_token_env": "MY_TOKEN", "dataset.fewshot_from": "pool.jsonl", "dataset.prompt_hash": "sha256:p",
    "dataset.fewshot_hash": "sha256:f",
    "model.spec": "scripted:random", "model.options": {"dtype": "bfloat16"}, "model.api_key_env": "KEY",
    "model.api_key": SecretStr("sk-x"),
    "scorer.mode": "logprob", "scorer.prompt_kind": "five_shot", "scorer.format": "chat", "scorer.shots": 5,
    "scorer.answer_rule": "tiger-lab-mmlu-pro", "scorer.extract": "robust", "scorer.no_answer": "guess",
    "scorer.truncated_as": "excluded", "scorer.norm": "token", "scorer.softmax_temperature": 2.0,
    "scorer.join": "space", "scorer.extractor_version": "proctor-extract/3", "scorer.judge_agreement": 4,
    "scorer.second_ask": False,
    "scorer.exec_limits": "proctor", "scorer.test_imports": True,
    "generation.temperature": 0.7, "generation.top_p": 0.9, "generation.max_tokens": 64, "generation.stop": ("##",),
    "generation.seed": 3, "generation.reasoning_effort": "high", "generation.enable_thinking": True,
    "generation.thinking_budget": 256, "generation.top_k": 20, "generation.min_p": 0.05,
    "generation.presence_penalty": 0.5, "generation.frequency_penalty": 0.5, "generation.system": "Be brief.",
    "generation.extra_body": {"x": 1}, "epochs": 3, "shard": ShardSpec(index=1, count=2),
    "judge.model": "scripted:random", "judge.base_url": ("http://127.0.0.1:9/v1",), "judge.api_key_env": "JKEY",
    "judge.api_key": SecretStr("sk-j"), "judge.options": {"dtype": "float32"},
    "judge.settings": GenerationSpec(temperature=0.5), "judge.price": MONEY, "judge.version": "3",
    "price": MONEY, "budget.max_cost": Decimal("1.5"), "cluster": "category", "unsafe_exec": True, "sandbox": "unsafe",
    "resolved": False,
    "stop_when": StopRule(baseline="runs/base", max_drop=0.05),
    "retry_of": RetryOf(run="runs/first", run_id="0123456789ab", max_tokens=512),
    "agent": AgentLimits(max_turns=5),
    "human_labels": HumanLabels(path="labels.jsonl", sha256="0" * 64, labels={"q1": True}),
}


def _base(field: str) -> RunSpec:
    return BASE.model_copy(update={"judge": JUDGE}) if field.startswith("judge.") else BASE


def _changed(record: Any, path: str, value: Any) -> Any:
    head, _, rest = path.partition(".")
    if not rest:
        return record.model_copy(update={head: value})
    inner = getattr(record, head) or (Budget(max_cost=Decimal(0)) if head == "budget" else None)
    return record.model_copy(update={head: _changed(inner, rest, value)})


def _record(spec: RunSpec) -> RunRecord:
    fields = {f.name: None for f in dataclasses.fields(RunRecord)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return RunRecord(**{**fields, "run_id": "r", "path": "p", "model": "m", "dataset": "quiz", "mode": "generate",
                        "started_at": "t"}, setting=spec_setting(spec))


@pytest.mark.parametrize("field", sorted(_rows()))
def test_each_rows_cells_are_what_the_code_does(field: str) -> None:
    assert field in CHANGED, f"give {field} a changed value here to check its row"
    cells = _rows()[field]
    base = _base(field)
    other = _changed(base, field, CHANGED[field])
    assert other != base
    assert (other.run_id() != base.run_id()) == cells["run id"].startswith("yes"), "run id"
    a, b = spec_setting(base), spec_setting(other)
    assert (setting_label(a) != setting_label(b)) == (cells["label"] == "yes"), "label"
    assert (setting_key(a) != setting_key(b)) == (cells["comparable"] == "yes"), "setting key"
    assert (not_comparable(_record(base), _record(other)) is not None) == (cells["comparable"] == "yes")
    if cells["comparable"] == "yes":
        assert not_comparable(_record(base), _record(other), mix_settings=True) is None
