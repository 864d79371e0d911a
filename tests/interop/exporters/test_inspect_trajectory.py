"""`--to inspect` of an agent run: each trajectory's messages (assistant turns with their tool calls, one tool
message per call) and its events (model, tool, limit) read back by inspect_ai's own reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trajectory_samples import HOSTILE, agent_sample, hostile_trajectory, long_trajectory

from proctor.interop.exporters import export
from proctor.log.runlog import Outcome

from .conftest import write_run

pytest.importorskip("inspect_ai")
from inspect_ai.log import read_eval_log


@pytest.fixture
def agent_run(tmp_path: Path) -> Path:
    samples = [agent_sample("hostile", hostile_trajectory()),
               agent_sample("long", long_trajectory(50, 100_000), Outcome.TRUNCATED)]
    return write_run(tmp_path / "agentic", samples, "agent-run", "0.3.0", max_tokens=256)


def _samples(run: Path, out: Path) -> dict[str, Any]:
    (path,) = export([run], "inspect", out)
    back = read_eval_log(str(path))
    assert back.samples is not None
    return {str(s.id): s for s in back.samples}


def test_the_messages_hold_the_turns_their_tool_calls_and_one_tool_message_per_call(
        agent_run: Path, tmp_path: Path) -> None:
    s = _samples(agent_run, tmp_path / "inspect")["hostile"]
    assert [m.role for m in s.messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    first, bad = s.messages[2].tool_calls, s.messages[4].tool_calls
    assert first is not None and len(first) == 1 and first[0].id == "call_0" and first[0].function == "math.add"
    assert first[0].arguments == {"a": 2, "b": HOSTILE} and first[0].parse_error is None  # the JSON as an object
    # arguments that are not JSON: {} and the reason (as Inspect's own parser does), the text as sent in the view
    assert bad is not None and bad[0].arguments == {} and "not JSON" in (bad[0].parse_error or "")
    assert bad[0].view is not None and bad[0].view.content == "{not json " + HOSTILE
    ok, refused = s.messages[3], s.messages[5]
    assert (ok.tool_call_id, ok.function, ok.text, ok.error) == ("call_0", "math.add", HOSTILE, None)
    assert refused.tool_call_id == "call_1" and refused.error is not None and refused.error.type == "parsing"
    assert s.messages[2].text == "Calling the tool, step 0." and s.messages[6].text == "The answer is 5."
    assert s.output.completion == "The answer is 5." and s.output.message.tool_calls is None
    assert [m.role for m in s.input] == ["system", "user"]  # type: ignore[union-attr]
    assert s.scores is not None and s.scores["proctor"].value == 1.0 and s.total_time == pytest.approx(0.9)


def test_the_events_are_a_model_event_per_turn_and_a_tool_event_per_call(agent_run: Path, tmp_path: Path) -> None:
    s = _samples(agent_run, tmp_path / "inspect")["hostile"]
    assert [e.event for e in s.events] == ["model", "tool", "model", "tool", "model"]
    models = [e for e in s.events if e.event == "model"]
    tools = [e for e in s.events if e.event == "tool"]
    # each model call's input is the conversation before it (resolved from the pooled messages)
    assert [len(e.input) for e in models] == [2, 4, 6]
    assert [m.text for m in models[2].input] == [m.text for m in s.messages[:6]]
    assert [t.name for t in models[0].tools] == ["math.add"] and models[0].tools[0].parameters.required == ["a"]
    assert models[0].output.message.tool_calls[0].function == "math.add"  # type: ignore[index]
    assert models[0].output.stop_reason == "tool_calls" and models[2].output.stop_reason == "stop"
    assert models[0].output.usage is not None and models[0].output.usage.input_tokens == 40
    assert models[2].cache == "read" and models[0].cache is None
    assert models[0].model == "openai/Qwen/Qwen3-8B" and models[0].working_time == pytest.approx(0.25)
    assert tools[0].id == "call_0" and tools[0].arguments == {"a": 2, "b": HOSTILE} and tools[0].result == HOSTILE
    assert tools[0].error is None and tools[0].message_id == s.messages[3].id
    assert tools[1].arguments == {} and tools[1].error is not None and tools[1].error.type == "parsing"
    assert tools[1].metadata is not None and tools[1].metadata["arguments_as_sent"] == "{not json " + HOSTILE
    assert tools[1].metadata["status"] == "bad_arguments"
    stamps = [e.timestamp for e in s.events]
    assert stamps == sorted(stamps) and models[0].timestamp.isoformat().startswith("2026-01-02T03:04:05")


def test_a_trajectory_stopped_by_a_limit_carries_it_and_its_cut_results(agent_run: Path, tmp_path: Path) -> None:
    s = _samples(agent_run, tmp_path / "inspect")["long"]
    assert len([m for m in s.messages if m.role == "tool"]) == 50 and len(s.messages) == 2 + 100
    assert [e.event for e in s.events].count("model") == 50 and s.events[-1].event == "sample_limit"
    assert s.events[-1].type == "turn" and s.events[-1].limit == 50  # type: ignore[union-attr]
    assert s.limit is not None and s.limit.type == "turn" and s.limit.limit == 50
    tool = next(e for e in s.events if e.event == "tool")
    assert tool.truncated == (400_000, 100_000)  # (the whole output's bytes, the bytes the model read)
    assert s.scores is not None and s.scores["proctor"].value == 0.0 and s.metadata["outcome"] == "truncated"


def test_the_pooled_log_is_small_and_reads_back_as_inspects_own_writer_writes_it(
        agent_run: Path, tmp_path: Path) -> None:
    """The model events' inputs point into a pool of the sample's messages (50 turns of 100 KB results: the
    conversation is written in the messages, the pool and the tool events, not once per turn), and the file equals
    the same samples written by inspect_ai's `write_eval_log`."""
    import zipfile

    from inspect_ai.log import write_eval_log

    from proctor.interop.inspect_export import _sample, eval_log
    from proctor.metrics.results import read_run

    (path,) = export([agent_run], "inspect", tmp_path / "inspect")
    member = json.loads(zipfile.ZipFile(path).read("samples/long_epoch_1.json"))
    assert len(json.dumps(member)) < 16_000_000  # 50 results of 100 KB (5 MB), three times; per turn: 125 MB
    assert all(e["input"] == [] and e["input_refs"] for e in member["events"] if e["event"] == "model")
    log = read_run(agent_run)
    whole = eval_log(log).model_copy(update={"samples": [_sample(log, s) for s in log.iter_samples(by_item=True)]})
    theirs = tmp_path / "theirs.eval"
    write_eval_log(whole, str(theirs), format="eval")
    ours, back = (read_eval_log(str(p), resolve_attachments=True) for p in (path, theirs))
    for a, b in zip(ours.samples or [], back.samples or [], strict=True):
        assert _without_random_ids(a.model_dump()) == _without_random_ids(b.model_dump())


def _without_random_ids(value: object) -> object:
    """A dump without the ids inspect_ai draws at random for each message and event (`id`, `uuid`)."""
    if isinstance(value, dict):
        return {k: _without_random_ids(v) for k, v in value.items() if k not in ("id", "uuid")}
    if isinstance(value, list):
        return [_without_random_ids(v) for v in value]
    return value


def test_a_bfcl_function_calling_run_exports_its_calls(tmp_path: Path) -> None:
    """End to end: `proctor run bfcl-simple --prompt function-calling` against the stand-in server's scripted
    calls, exported, read back: each sample's one turn calls the function, its arguments an object."""
    pytest.importorskip("uvicorn")
    from benchmarks.bfcl_rows import WEATHER, write

    from proctor.cli import main
    from proctor.testing import serve

    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Weather in city {i}?"}]],
                  "function": [WEATHER]} for i in range(2)]
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"weather": {"city": [f"city {i}"]}}]} for i in range(2)]
    path = write(tmp_path / "bfcl", "simple_python", questions, answers)
    with serve(tool_replies=[[{"name": "weather", "arguments": {"city": "city 0"}}]]) as srv:
        assert main(["run", "bfcl-simple", "--data-file", str(path), "--prompt", "function-calling", "--model",
                     "openai:scripted", "--base-url", srv.base_url, "-o", str(tmp_path / "run"), "--store",
                     str(tmp_path / "store.sqlite"), "--no-progress", "--no-history"]) == 0
    samples = _samples(tmp_path / "run", tmp_path / "inspect")
    samples = {k.rsplit(".", 1)[-1]: v for k, v in samples.items()}
    assert sorted(samples) == ["simple_python_0", "simple_python_1"]
    for s in samples.values():
        assert [m.role for m in s.messages] == ["user", "assistant"]  # `called`: the calls are the answer, none run
        (call,) = s.messages[1].tool_calls or []
        assert call.function == "weather" and call.arguments == {"city": "city 0"}
        assert [e.event for e in s.events] == ["model"] and s.events[0].output.message.tool_calls[0].id == call.id
        assert [t.name for t in s.events[0].tools] == ["weather"]
    assert samples["simple_python_0"].scores["proctor"].value == 1.0  # type: ignore[index]
    assert samples["simple_python_1"].scores["proctor"].value == 0.0  # type: ignore[index]


def test_without_the_pool_each_model_event_holds_its_whole_input(
        agent_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An inspect_ai older than `events_data`/`input_refs`: the inputs are written whole, and read back the same."""
    import proctor.interop.inspect_trajectory as it

    monkeypatch.setattr(it, "pooled", lambda: False)
    s = _samples(agent_run, tmp_path / "inspect")["hostile"]
    models = [e for e in s.events if e.event == "model"]
    assert [len(e.input) for e in models] == [2, 4, 6] and s.events_data is None
    assert [m.text for m in models[2].input] == [m.text for m in s.messages[:6]]


def test_a_failed_request_is_the_model_events_error_and_no_message(tmp_path: Path) -> None:
    from trajectory_samples import calling_turn

    from proctor.core.trajectory import Trajectory, Turn

    failed = Turn(index=1, error="HTTP 500 after 4 retries", started_s=0.3)
    t = Trajectory(turns=[calling_turn(0), failed], stop="model_error", stop_detail="HTTP 500 after 4 retries")
    sample = agent_sample("failed", t, Outcome.ERROR).model_copy(update={"error": "HTTP 500 after 4 retries",
                                                                         "raw_output": None})
    run = write_run(tmp_path / "agentic", [sample], "agent-run", "0.3.0", max_tokens=256)
    s = _samples(run, tmp_path / "inspect")["failed"]
    assert [m.role for m in s.messages] == ["system", "user", "assistant", "tool"]
    assert [e.event for e in s.events] == ["model", "tool", "model"]  # no limit event: not a limit
    assert s.events[2].error == "HTTP 500 after 4 retries" and s.events[2].output.error == s.events[2].error
    assert s.error is not None and s.limit is None and not s.scores
