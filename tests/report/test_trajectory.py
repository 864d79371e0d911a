"""A trajectory in the report's sample blob: every turn's text, calls and results, capped per sample."""

from __future__ import annotations

import json

from trajectory_samples import agent_sample, calling_turn, hostile_trajectory, long_trajectory

from proctor.core.tools import ToolCall
from proctor.core.trajectory import ToolResult, Trajectory
from proctor.report.trajectory import (
    BUDGET,
    MAX_TEXT,
    MAX_TURNS,
    calls_snippet,
    cut,
    shown_turns,
    trajectory_row,
)


def test_a_short_trajectory_is_carried_whole() -> None:
    row = trajectory_row(hostile_trajectory())
    assert row["stop"] == "answered" and row["n"] == 3 and row["calls"] == 2 and row["gap"] is None
    assert row["tok"] == [141, 30] and row["tools"] == ["math.add"]
    first, bad = row["turns"][0]["calls"][0], row["turns"][1]["calls"][0]
    assert first["n"] == "math.add" and first["r"] is not None and first["r"]["st"] == "ok"
    assert bad["a"] is not None and str(bad["a"][0]).startswith("{not json") and len(bad["a"]) == 1
    assert row["turns"][2]["c"] is True and row["turns"][2]["tx"] == ["The answer is 5."]


def test_a_long_trajectory_keeps_its_first_and_last_turns_and_stays_small() -> None:
    """50 turns of 100 KB results (5 MB on disk): 24 turns, the gap counted, under the budget."""
    t = long_trajectory(50, 100_000)
    row = trajectory_row(t)
    assert len(row["turns"]) == MAX_TURNS and row["gap"] == [12, 26]
    assert [x["i"] for x in row["turns"]] == [*range(12), *range(38, 50)]
    size = len(json.dumps(row))
    assert size < BUDGET + 20_000, size
    texts = [c["r"]["x"] for x in row["turns"] for c in x["calls"] if c["r"] and c["r"]["x"]]
    assert all(len(str(x[0])) <= MAX_TEXT and len(str(x[0])) + (int(x[1]) if len(x) > 1 else 0) == 100_000
               for x in texts)  # what is shown and what is cut add up to the whole result
    assert texts[-1] == ["", 100_000]  # the budget spent: the last results are named and counted, not shown


def test_a_reply_with_hundreds_of_calls_shows_the_first_and_counts_the_rest() -> None:
    turn = calling_turn(0)
    calls = [ToolCall(f"c{i}", "math.add", "{}") for i in range(300)]
    results = [ToolResult(call_id=c.id, name=c.name, status="not_run") for c in calls]
    t = Trajectory(turns=[turn.model_copy(update={"tool_calls": calls, "results": results})], stop="max_tool_calls")
    (row,) = trajectory_row(t)["turns"]
    assert len(row["calls"]) == 20 and row["more"] == 280 and row["calls"][0]["r"]["st"] == "not_run"  # type: ignore[index]


def test_a_result_without_its_call_is_named_by_the_result() -> None:
    turn = calling_turn(0)
    extra = ToolResult(call_id="orphan", name="math.add", status="error", content="boom")
    t = Trajectory(turns=[turn.model_copy(update={"results": [*turn.results, extra]})], stop="answered")
    calls = trajectory_row(t)["turns"][0]["calls"]
    assert [c["id"] for c in calls] == ["call_0", "orphan"] and calls[1]["a"] is None


def test_cut_and_shown_turns() -> None:
    assert cut("abc", 2) == ["ab", 1] and cut("abc", 3) == ["abc"] and cut(None) is None
    turns = long_trajectory(5, 10).turns
    assert shown_turns(turns, 4, 2) == ([*turns[:2], *turns[3:]], 2, 1) and shown_turns(turns)[2] == 0


def test_the_blob_carries_the_trajectory_and_a_calling_row_shows_its_calls(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from report_runs import gen_samples, write_run

    from proctor.metrics.results import read_run
    from proctor.report.data import summarize_run
    from proctor.report.html import sample_blob

    called = Trajectory(turns=[calling_turn(0).model_copy(update={"text": ""})], stop="called")
    assert calls_snippet(called) == 'math.add({"a": 2, "b": 3})'
    samples = [agent_sample("called", called), *gen_samples(3, seed=1, skill=0.5)]
    d = write_run(tmp_path, "run", model="openai:m", samples=samples)
    rows = sample_blob([summarize_run(0, read_run(d))])["samples"]
    assert rows[0]["tc"] == 'math.add({"a": 2, "b": 3})' and rows[0]["t"]["stop"] == "called"
    assert all("t" not in r and "tc" not in r for r in rows[1:])
