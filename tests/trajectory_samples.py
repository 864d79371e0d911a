"""Samples whose records are trajectories (synthetic: no benchmark content), for the report and export tests."""

from __future__ import annotations

from proctor.core.model import Message
from proctor.core.tools import ToolCall, ToolDef
from proctor.core.trajectory import ToolResult, Trajectory, Turn
from proctor.log.runlog import Outcome, Sample

HOSTILE = '<img src=x onerror="window.__pwned=3">'
ADD = ToolDef("math.add", "Add two numbers.", {"type": "object", "properties": {"a": {"type": "integer"},
                                                                                 "b": {"type": "integer"}},
                                                "required": ["a"]})
OPENING = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "What is 2 + 3, twice?"}]


def calling_turn(i: int, *, arguments: str = '{"a": 2, "b": 3}', result: str = "5", status: str = "ok",
                 size: int | None = None) -> Turn:
    """Turn `i`: one call of math.add with `arguments` (as sent), answered with `result`."""
    call = ToolCall(f"call_{i}", "math.add", arguments)
    truncated = size is not None
    res = ToolResult(call_id=call.id, name=call.name, status=status, content=result,  # type: ignore[arg-type]
                     size_bytes=size if size is not None else len(result.encode()), truncated=truncated, wall_s=0.01)
    return Turn(index=i, text=f"Calling the tool, step {i}.", tool_calls=[call], finish_reason="tool_calls",
                input_tokens=40 + i, output_tokens=12, latency_s=0.25, started_s=0.3 * i, results=[res])


def answering_turn(i: int, text: str = "The answer is 5.") -> Turn:
    return Turn(index=i, text=text, finish_reason="stop", input_tokens=60, output_tokens=6, latency_s=0.2,
                started_s=0.3 * i, cached=True)


def hostile_trajectory() -> Trajectory:
    """Two calls, then the answer: the payload in a call's arguments and in a result; one call's arguments not
    JSON (refused: bad_arguments)."""
    turns = [calling_turn(0, arguments='{"a": 2, "b": "' + HOSTILE.replace('"', '\\"') + '"}', result=HOSTILE),
             calling_turn(1, arguments="{not json " + HOSTILE, result="bad_arguments: arguments are not JSON",
                          status="bad_arguments"),
             answering_turn(2)]
    return Trajectory(tools=[ADD], turns=turns, stop="answered", wall_s=0.9)


def long_trajectory(n: int = 50, result_bytes: int = 100_000) -> Trajectory:
    """`n` calling turns, each answered with a `result_bytes` result, stopped by the turn limit."""
    big = ("x" * 99 + "\n") * (result_bytes // 100)
    turns = [calling_turn(i, result=big, size=result_bytes * 4) for i in range(n)]
    return Trajectory(tools=[ADD], turns=turns, stop="max_turns", stop_detail=f"{n} turns", wall_s=0.3 * n)


def agent_sample(name: str, trajectory: Trajectory, outcome: Outcome = Outcome.CORRECT) -> Sample:
    """A sample of `trajectory`, as the agent scorer writes it (prompt, last turn's text, summed tokens)."""
    last = trajectory.turns[-1]
    score = {Outcome.CORRECT: 1.0, Outcome.WRONG: 0.0}.get(outcome, 0.0 if outcome is Outcome.TRUNCATED else None)
    traj = trajectory.model_copy(update={"messages": [Message(m["role"], m["content"]) for m in OPENING]})
    return Sample(sample_id=f"{name}#0", item_id=name, dataset="agentic", category="tools", prompt=OPENING,
                  reference="5", raw_output=last.text, extracted="5" if outcome is Outcome.CORRECT else None,
                  extraction_rule="agent" if outcome is not Outcome.TRUNCATED else "agent:max_turns", score=score,
                  outcome=outcome, input_tokens=traj.input_tokens, output_tokens=traj.output_tokens,
                  latency_s=sum(t.latency_s or 0 for t in traj.turns), finish_reason=last.finish_reason,
                  trajectory=traj)
