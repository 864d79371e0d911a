"""A sample's trajectory as the report's sample browser shows it: a compact row of the blob (short keys), capped so
that a long conversation cannot blow up the page — at most `MAX_TURNS` turns (the first and the last ones, the
count of those left out between them), each text cut at `MAX_TEXT` characters (with how many were left out); the
whole record stays in the run's samples.jsonl. The page renders it with textContent only (report.js).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import TypedDict

from ..core.tools import ToolCall
from ..core.trajectory import ToolResult, Trajectory, Turn

MAX_TURNS = 24  # turns a sample's row carries: the first HEAD_TURNS and the last MAX_TURNS - HEAD_TURNS
HEAD_TURNS = 12
MAX_TEXT = 4_000  # characters of one text (a turn's reply or reasoning, a call's arguments, a result)
MAX_CALLS = 20  # calls of one turn shown (a reply with 300 calls: the first 20, and the count of the rest)
BUDGET = 60_000  # characters of text one sample's row carries in all; past it every text is cut to nothing


Cut = list[str | int]  # [text] whole, or [its first MAX_TEXT characters, how many were left out]


class ResultRow(TypedDict):
    st: str  # status
    tr: bool  # the tool's own cut (max_result_bytes)
    b: int  # the whole output's UTF-8 size
    w: float  # wall seconds
    x: Cut | None  # the text the model read


class CallRow(TypedDict):
    id: str
    n: str  # the function's name
    a: Cut | None  # arguments as sent
    r: ResultRow | None


class TurnRow(TypedDict):
    i: int
    tx: Cut | None
    rs: Cut | None  # reasoning
    fr: str | None  # finish reason
    tok: list[int | None]  # input, output tokens
    lat: float | None
    at: float  # seconds since the trajectory began
    err: str | None
    c: bool  # answered by the request cache
    calls: list[CallRow]
    more: int  # calls of the turn not shown


class TrajectoryRow(TypedDict):
    stop: str | None
    sd: str | None  # stop detail
    w: float
    n: int  # turns in all
    calls: int  # calls in all
    tok: list[int]
    tools: list[str]  # the names offered
    turns: list[TurnRow]
    gap: list[int] | None  # [where in `turns` the left-out turns were, how many]


def cut(text: str | None, limit: int = MAX_TEXT) -> Cut | None:
    """`[text]` when it fits, else `[its first `limit` characters, how many were left out]`; None stays None."""
    if text is None:
        return None
    return [text] if len(text) <= limit else [text[:limit], len(text) - limit]


class _Budget:
    """The characters a row may still carry: each text is cut at MAX_TEXT, or at what is left of the budget."""

    def __init__(self, left: int = BUDGET) -> None:
        self.left = left

    def cut(self, text: str | None) -> Cut | None:
        if text is None:
            return None
        limit = min(MAX_TEXT, self.left)
        self.left -= min(len(text), limit)
        return cut(text, limit)


def _result(r: ToolResult | None, b: _Budget) -> ResultRow | None:
    """One call's result: status, the tool's own cut (`tr`), its whole size, wall time and its text."""
    if r is None:
        return None
    return ResultRow(st=r.status, tr=r.truncated, b=r.size_bytes, w=r.wall_s, x=b.cut(r.content))


def _call(call: ToolCall | None, result: ToolResult | None, b: _Budget) -> CallRow:
    """One call with its result (paired by position: the agent answers the calls in order)."""
    if call is not None:
        return CallRow(id=call.id[:200], n=call.name[:200], a=b.cut(call.arguments), r=_result(result, b))
    # a result without its call (a hand-written log): named by the result
    return CallRow(id=result.call_id[:200] if result else "", n=result.name[:200] if result else "", a=None,
                   r=_result(result, b))


def _turn(t: Turn, b: _Budget) -> TurnRow:
    pairs = list(zip_longest(t.tool_calls, t.results))
    return TurnRow(i=t.index, tx=b.cut(t.text), rs=b.cut(t.reasoning), fr=t.finish_reason,
                   tok=[t.input_tokens, t.output_tokens], lat=t.latency_s, at=t.started_s, err=cut_line(t.error),
                   c=t.cached, calls=[_call(c, r, b) for c, r in pairs[:MAX_CALLS]],
                   more=max(0, len(pairs) - MAX_CALLS))


def cut_line(text: str | None) -> str | None:
    """An error message, at most MAX_TEXT characters."""
    return None if text is None else text[:MAX_TEXT]


def shown_turns(turns: Sequence[Turn], limit: int = MAX_TURNS, head: int = HEAD_TURNS) -> tuple[list[Turn], int, int]:
    """The turns a row carries (the first `head` and the last `limit - head` when there are more than `limit`),
    where the gap is (its position in the list shown) and how many turns it leaves out."""
    if len(turns) <= limit:
        return list(turns), len(turns), 0
    tail = limit - head
    return [*turns[:head], *turns[len(turns) - tail:]], head, len(turns) - limit


def trajectory_row(t: Trajectory) -> TrajectoryRow:
    """The blob's `t` field of a sample with a trajectory: how it ended, its totals, the tools offered, its turns."""
    turns, gap_at, left_out = shown_turns(t.turns)
    b = _Budget()
    return TrajectoryRow(stop=t.stop, sd=cut_line(t.stop_detail), w=t.wall_s, n=len(t.turns), calls=t.tool_calls,
                         tok=[t.input_tokens, t.output_tokens], tools=[d.name[:200] for d in t.tools[:100]],
                         turns=[_turn(x, b) for x in turns], gap=[gap_at, left_out] if left_out else None)


def calls_snippet(t: Trajectory) -> str:
    """What the sample list's row shows for a trajectory without a final text: its last turn's calls."""
    last = t.turns[-1] if t.turns else None
    if last is None or not last.tool_calls:
        return ""
    return "; ".join(f"{c.name}({c.arguments[:160]})" for c in last.tool_calls[:4])[:220]


__all__ = ["MAX_TEXT", "MAX_TURNS", "TrajectoryRow", "calls_snippet", "cut", "shown_turns", "trajectory_row"]
