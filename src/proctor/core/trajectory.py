"""A sample that is a conversation with tools: every message, call, result, timing and token count, turn by turn
(`Trajectory`, kept on the sample: `proctor.log.runlog.Sample.trajectory`), and how it ended (`AgentStop`). The
agent loop (`proctor.scoring.agent`) writes it; docs/agents.md says what each field means.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from .model import Message
from .tools import ToolCall, ToolDef

# how a trajectory ended: the model answered (a turn without calls), or called where its calls are the answer (the
# functions only declared: BFCL's single-turn categories), or a limit stopped it, or the model failed
AgentStop = Literal["answered", "called", "max_turns", "max_tool_calls", "max_tokens", "wall_time", "model_error"]
LIMIT_STOPS: frozenset[str] = frozenset({"max_turns", "max_tool_calls", "max_tokens", "wall_time"})
# what became of one call: run (ok, or the tool raised: error), stopped at its time limit, refused before running
# (an unknown or empty name, arguments that are not a JSON object), or never run (a limit came first)
ToolStatus = Literal["ok", "error", "timeout", "unknown_function", "bad_arguments", "not_run"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ToolResult(_Record):
    """What proctor returned to the model for one call: its text (cut at the agent's `max_result_bytes`), the
    size of the whole output, and the call's status and wall time."""

    call_id: str
    name: str
    status: ToolStatus
    content: str = ""
    size_bytes: int = Field(default=0, ge=0)  # the output's UTF-8 size before any cut
    truncated: bool = False
    wall_s: float = Field(default=0.0, ge=0)
    # a JSON value the tool returned beside its text (an MCP tool's structured content): recorded, not sent;
    # dropped (and `truncated` set) when its JSON runs past `max_result_bytes`
    structured: JsonValue = None


class Turn(_Record):
    """One model turn: its reply (text, reasoning, calls as sent), its usage and timing, and its calls' results."""

    index: int = Field(ge=0)
    text: str = ""
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    latency_s: float | None = None
    started_s: float = Field(default=0.0, ge=0)  # seconds since the trajectory began
    error: str | None = None  # the model's request failed (the trajectory stops: model_error)
    cached: bool = False  # answered by the request cache
    results: list[ToolResult] = Field(default_factory=list)


class Trajectory(_Record):
    """The whole conversation of one sample with its tools: the opening messages, the tools offered, each turn,
    and how it ended (`stop`, None while it runs) after `wall_s` seconds."""

    messages: list[Message] = Field(default_factory=list)  # the opening: system and user messages as sent
    tools: list[ToolDef] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    stop: AgentStop | None = None
    stop_detail: str | None = None  # the limit's value, or the model's error
    wall_s: float = Field(default=0.0, ge=0)

    @property
    def tool_calls(self) -> int:
        return sum(len(t.tool_calls) for t in self.turns)

    @property
    def input_tokens(self) -> int:
        return sum(t.input_tokens or 0 for t in self.turns)

    @property
    def output_tokens(self) -> int:
        return sum(t.output_tokens or 0 for t in self.turns)

    @property
    def answer(self) -> str | None:
        """The final turn's text when the model answered; None when a limit or an error stopped it."""
        return self.turns[-1].text if self.stop == "answered" and self.turns else None

    def conversation(self) -> list[Message]:
        """Every message so far, as the next request sends them: the opening, then each turn's reply and the
        results of its calls (one `tool` message per call, in the order of the calls)."""
        out = list(self.messages)
        for turn in self.turns:
            out.append(Message("assistant", turn.text, tool_calls=tuple(turn.tool_calls)))
            out.extend(Message("tool", r.content, tool_call_id=r.call_id) for r in turn.results)
        return out


__all__ = ["LIMIT_STOPS", "AgentStop", "ToolResult", "ToolStatus", "Trajectory", "Turn"]
