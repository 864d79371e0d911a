"""core.trajectory: a sample's conversation with tools, written and read back, and the messages it sends next."""

from __future__ import annotations

from proctor.core.model import Message
from proctor.core.tools import ToolCall, ToolDef
from proctor.core.trajectory import ToolResult, Trajectory, Turn
from proctor.log.runlog import Outcome, Sample


def _trajectory() -> Trajectory:
    calls = [ToolCall("c1", "math.add", '{"a": 1, "b": 2}'), ToolCall("c2", "echo", "{")]
    return Trajectory(
        messages=[Message("system", "Use tools."), Message("user", "1+2?")],
        tools=[ToolDef("math.add", "adds", {"type": "object"}), ToolDef("echo")],
        turns=[Turn(index=0, tool_calls=calls, input_tokens=10, output_tokens=5,
                    results=[ToolResult(call_id="c1", name="math.add", status="ok", content="3", size_bytes=1),
                             ToolResult(call_id="c2", name="echo", status="bad_arguments", content="not JSON")]),
               Turn(index=1, text="It is 3.", input_tokens=20, output_tokens=3)],
        stop="answered", wall_s=0.5)


def test_a_trajectory_is_the_samples_record_and_reads_back_equal() -> None:
    sample = Sample(sample_id="q#0", item_id="q", outcome=Outcome.CORRECT, score=1.0, trajectory=_trajectory())
    back = Sample.model_validate_json(sample.model_dump_json())
    assert back == sample and back.trajectory is not None
    assert back.trajectory.turns[0].tool_calls[1].arguments == "{"  # as the model sent it
    assert (back.trajectory.tool_calls, back.trajectory.input_tokens, back.trajectory.output_tokens) == (2, 30, 8)
    assert back.trajectory.answer == "It is 3."


def test_a_sample_without_tools_writes_no_trajectory() -> None:
    assert "trajectory" not in Sample(sample_id="q#0", item_id="q", outcome=Outcome.WRONG, score=0.0).model_dump()


def test_the_conversation_is_the_opening_then_each_reply_and_its_results() -> None:
    roles = [(m.role, m.tool_call_id, len(m.tool_calls)) for m in _trajectory().conversation()]
    assert roles == [("system", None, 0), ("user", None, 0), ("assistant", None, 2), ("tool", "c1", 0),
                     ("tool", "c2", 0), ("assistant", None, 0)]


def test_a_limit_leaves_no_answer() -> None:
    t = _trajectory().model_copy(update={"stop": "max_turns"})
    assert t.answer is None
