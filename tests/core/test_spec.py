"""RunSpec: frozen, typed, strict; its run id changes with what changes a score and only with that."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from proctor.core.spec import (
    DatasetRef,
    GenerationSpec,
    JudgeSpec,
    ModelSpec,
    Money,
    RunSpec,
    ScorerSpec,
    ShardSpec,
)


def _spec(**changes: object) -> RunSpec:
    base = RunSpec(dataset=DatasetRef(name="aime-2025", content_hash="sha256:abc"),
                   model=ModelSpec(spec="scripted:first"))
    return base.model_copy(update=changes)


def test_frozen_and_strict() -> None:
    spec = _spec()
    with pytest.raises(ValidationError):
        spec.epochs = 2  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        RunSpec.model_validate({**spec.model_dump(), "epoch": 2})
    with pytest.raises(ValidationError, match="api_key_env"):
        ModelSpec(spec="openai:m", options={"api_key": "sk-secret"})
    with pytest.raises(ValidationError, match="base_url"):
        JudgeSpec(model="openai:j", options={"base_url": "http://x"})


def test_round_trips_through_json() -> None:
    spec = _spec(judge=JudgeSpec(model="openai:j", base_url=("http://127.0.0.1:1/v1",), api_key_env="JUDGE_KEY"),
                 price=Money(input="0.5", output="1.25"))
    again = RunSpec.model_validate_json(spec.model_dump_json())
    assert again == spec
    assert again.run_id() == spec.run_id()


@pytest.mark.parametrize("change", [
    {"scorer": ScorerSpec(no_answer="guess")},
    {"scorer": ScorerSpec(truncated_as="excluded")},
    {"scorer": ScorerSpec(prompt_kind="chain_of_thought")},
    {"generation": GenerationSpec(max_tokens=10)},
    {"epochs": 2},
    {"dataset": DatasetRef(name="aime-2025", content_hash="sha256:other")},
    {"model": ModelSpec(spec="scripted:first", options={"dtype": "float32"})},
    {"judge": JudgeSpec(model="openai:j")},
    {"scorer": ScorerSpec(exec_limits="authors")},
    {"scorer": ScorerSpec(exec_limits="proctor")},
    {"scorer": ScorerSpec(test_imports=True)},
])
def test_what_changes_a_score_changes_the_run_id(change: dict[str, object]) -> None:
    assert _spec(**change).run_id() != _spec().run_id()


@pytest.mark.parametrize("change", [
    {"model": ModelSpec(spec="scripted:first", options={"concurrency": 3, "base_url": "http://x"})},
    {"dataset": DatasetRef(name="aime-2025", content_hash="sha256:abc", data_file="/elsewhere/aime.jsonl")},
    {"price": Money(input=1, output=2)},
    {"shard": ShardSpec(index=1, count=2)},
])
def test_how_requests_travel_is_not_identity(change: dict[str, object]) -> None:
    assert _spec(**change).run_id() == _spec().run_id()


def test_judge_endpoint_is_not_identity_but_its_model_is() -> None:
    a = _spec(judge=JudgeSpec(model="openai:j", base_url=("http://a/v1",)))
    b = _spec(judge=JudgeSpec(model="openai:j", base_url=("http://b/v1",)))
    c = _spec(judge=JudgeSpec(model="openai:k", base_url=("http://a/v1",)))
    assert a.run_id() == b.run_id() != c.run_id()


def test_one_generation_record_serves_the_spec_the_requests_and_the_manifest() -> None:
    """Issue 36 #3: one class is the spec's generation, a backend request's settings and the manifest's record."""
    import proctor
    from proctor.core.model import GenerateRequest
    from proctor.log.provenance import ScorerInfo
    from proctor.log.runlog import RunSettings

    assert GenerationSpec is proctor.GenerationSettings is proctor.models.GenerationSpec
    for record, name in ((RunSpec, "generation"), (JudgeSpec, "settings"), (ScorerInfo, "judge_settings"),
                         (RunSettings, "generation")):
        assert GenerationSpec in getattr(record.model_fields[name].annotation, "__args__", (
            record.model_fields[name].annotation,)), (record, name)
    assert GenerateRequest.__dataclass_fields__["settings"].type in ("GenerationSpec", GenerationSpec)
    spec = GenerationSpec(temperature=0.7, max_tokens=32, stop="Question:", top_k=5, extra_body={"n": 1})
    assert spec.stop == ("Question:",) and hash(spec) == hash(spec.model_copy(update={"extra_body": {}}))
    assert spec.as_dict() == {"temperature": 0.7, "top_p": None, "max_tokens": 32, "stop": ["Question:"],
                              "seed": None, "top_k": 5, "extra_body": {"n": 1}}  # the cache key's shape, as before


@pytest.mark.parametrize(("given", "field"), [({"temperature": -0.1}, "temperature"), ({"top_p": 0}, "top_p"),
                                              ({"max_tokens": 0}, "max_tokens"), ({"top_k": 0}, "top_k"),
                                              ({"min_p": 1.5}, "min_p"), ({"thinking_budget": 0}, "thinking_budget")])
def test_the_generation_ranges_are_the_specs_own(given: dict[str, float], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        GenerationSpec(**given)


def test_a_key_given_as_such_is_never_written() -> None:
    spec = _spec(model=ModelSpec(spec="openai:m", api_key="sk-secret-123"))
    assert "sk-secret" not in spec.model_dump_json()
    assert "sk-secret" not in repr(spec)
    assert spec.model.api_key is not None and spec.model.api_key.get_secret_value() == "sk-secret-123"
    assert spec.run_id() == _spec(model=ModelSpec(spec="openai:m")).run_id()


def test_the_execution_settings_leave_other_runs_ids_as_they_were() -> None:
    """#49 item 1: a run that executes no code has no `exec_limits`, and its id is the one it had before (its
    identity holds no key for them); a code run's id differs between the authors' limits and proctor's."""
    assert "exec_limits" not in _spec().identity()["scorer"] and "test_imports" not in _spec().identity()["scorer"]
    assert _spec().run_id() == "63a58ae2a580"  # main before #49
    authors, strict = _spec(scorer=ScorerSpec(exec_limits="authors")), _spec(scorer=ScorerSpec(exec_limits="proctor"))
    assert authors.run_id() != strict.run_id()


def test_agent_limits_enter_the_run_id_only_when_set_and_each_limit_changes_it() -> None:
    from proctor.core.spec import AgentLimits, DatasetRef, ModelSpec, RunSpec

    base = RunSpec(dataset=DatasetRef(name="quiz", content_hash="sha256:x"), model=ModelSpec(spec="scripted:first"))
    assert "agent" not in base.identity()
    limited = base.model_copy(update={"agent": AgentLimits()})
    ids = {base.run_id(), limited.run_id()}
    for name, value in [("max_turns", 3), ("max_tool_calls", 7), ("max_tokens", 900), ("wall_time_s", 5.0),
                        ("tool_timeout_s", 1.0), ("max_result_bytes", 10)]:
        ids.add(base.model_copy(update={"agent": AgentLimits(**{name: value})}).run_id())
    assert len(ids) == 8
