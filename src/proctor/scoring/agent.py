"""The agent loop: the model is offered tools (Python functions), calls them, proctor runs each call and returns its
result, until the model answers (a turn without calls) or a limit stops it (`core.spec.AgentLimits`: turns, tool
calls, tokens, wall time), every turn recorded in the sample's `Trajectory` (docs/agents.md).

Nothing the model sends can crash or hang the loop: a call with an empty or unknown name, or arguments that are
not a JSON object (or do not fit the function), is answered with what is wrong and counts as a call; a reply with
more calls than the limit leaves runs what fits and stops; a tool that raises is its error message, one that runs
past `tool_timeout_s` is stopped (an async tool is cancelled; a plain function runs in a daemon thread, abandoned
at its time limit), and a result longer than `max_result_bytes` is cut and says so.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
import types
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.model import Capability, GenerateRequest, Generation, GenerationSpec, Message, Model, require
from ..core.spec import AgentLimits
from ..core.tools import ToolCall, ToolChoice, ToolDef, call_problem, parsed_arguments
from ..core.trajectory import LIMIT_STOPS, AgentStop, ToolResult, Trajectory, Turn
from ..log.runlog import Outcome


@dataclass(frozen=True)
class ToolOutput:
    """What a tool source (an MCP server) returns for one call: the text the model reads, a JSON value beside it
    (recorded in the result, not sent) and whether the call failed (status `error`)."""

    text: str
    structured: Any = None
    error: bool = False


@dataclass(frozen=True)
class Tool:
    """A function offered to the model: its definition and the Python callable (plain or async) that runs it."""

    definition: ToolDef
    fn: Callable[..., Any]

    @property
    def name(self) -> str:
        return self.definition.name


_JSON_TYPES: dict[Any, str] = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array",
                               dict: "object", tuple: "array"}


def _schema_of(annotation: Any) -> dict[str, Any]:
    """The JSON schema of a parameter's annotation (unknown or absent: any value)."""
    origin = typing.get_origin(annotation) or annotation
    if origin in (typing.Union, types.UnionType):
        kinds = [_schema_of(a) for a in typing.get_args(annotation) if a is not type(None)]
        return kinds[0] if len(kinds) == 1 else {}
    return {"type": _JSON_TYPES[origin]} if origin in _JSON_TYPES else {}


def python_tool(fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
                parameters: dict[str, Any] | None = None) -> Tool:
    """`fn` as a tool: its name, its docstring's first paragraph and a schema read from its signature (keyword
    parameters; those without a default required), each of which may be given instead."""
    if parameters is None:
        try:
            hints = typing.get_type_hints(fn)
        except Exception:  # noqa: BLE001 - a name the hints cannot resolve (a local class): any value, then
            hints = {}
        props, required = {}, []
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            props[p.name] = _schema_of(hints.get(p.name))
            if p.default is p.empty:
                required.append(p.name)
        parameters = {"type": "object", "properties": props, "required": required}
    doc = description if description is not None else (inspect.getdoc(fn) or "").split("\n\n")[0]
    return Tool(ToolDef(name or fn.__name__, doc, parameters), fn)


def cut(text: str, limit: int) -> tuple[str, int, bool]:
    """(the text cut to `limit` UTF-8 bytes with a note saying so, its whole size in bytes, whether it was cut)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, len(data), False
    kept = data[:limit].decode("utf-8", "ignore")
    return f"{kept}\n[cut: {limit} of {len(data)} bytes shown]", len(data), True


def _as_text(value: Any) -> str:
    """A tool's return value as the text the model reads: text itself, bytes decoded, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


async def _in_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """`fn(**kwargs)` in a daemon thread of its own: a call past its time limit is abandoned, never awaited at exit
    (asyncio's default executor would be, and a hung tool would hang the run's end)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            (done.set_result if ok else done.set_exception)(value)

    def work() -> None:
        try:
            value, ok = fn(**kwargs), True
        except BaseException as e:  # noqa: BLE001 - whatever the tool raises is its result
            value, ok = e, False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop has ended: nobody waits for this call any more
            pass

    threading.Thread(target=work, name="proctor-tool", daemon=True).start()
    return await done


async def run_call(tool: Tool, call: ToolCall, limits: AgentLimits, timeout: float) -> ToolResult:
    """Run one readable call under `timeout` seconds; its result, error or time-out as the model will read it."""
    t0 = time.monotonic()
    kwargs = parsed_arguments(call)
    try:
        inspect.signature(tool.fn).bind(**kwargs)
    except TypeError as e:
        return ToolResult(call_id=call.id, name=call.name, status="bad_arguments", content=f"bad arguments: {e}")
    status: Any = "ok"
    structured: Any = None
    try:
        async with asyncio.timeout(timeout):
            if inspect.iscoroutinefunction(tool.fn):
                value = await tool.fn(**kwargs)
            else:
                value = await _in_thread(tool.fn, kwargs)
        if isinstance(value, ToolOutput):
            text, structured, status = value.text, value.structured, "error" if value.error else "ok"
        else:
            text = _as_text(value)
    except TimeoutError:
        status, text = "timeout", f"the call was stopped after {timeout:g}s"
    except Exception as e:  # noqa: BLE001 - a tool's failure is what the model reads
        status, text = "error", f"{type(e).__name__}: {e}"
    except BaseException as e:  # SystemExit, KeyboardInterrupt raised by the tool itself, in its thread
        if isinstance(e, asyncio.CancelledError):
            raise
        status, text = "error", f"{type(e).__name__}: {e}"
    content, size, truncated = cut(text, limits.max_result_bytes)
    structured, dropped = _kept(structured, limits.max_result_bytes)
    return ToolResult(call_id=call.id, name=call.name, status=status, content=content, size_bytes=size,
                      truncated=truncated or dropped, wall_s=time.monotonic() - t0, structured=structured)


def _kept(value: Any, limit: int) -> tuple[Any, bool]:
    """(a structured result as recorded, whether it was dropped): kept when it is JSON within `limit` bytes."""
    if value is None:
        return None, False
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace"))
    except (TypeError, ValueError, RecursionError):
        return None, True
    return (value, False) if size <= limit else (None, True)


def _refused(call: ToolCall, problem: str) -> ToolResult:
    unknown = not call.name.strip() or problem.startswith("no function")
    return ToolResult(call_id=call.id, name=call.name, status="unknown_function" if unknown else "bad_arguments",
                      content=problem)


OnTurn = Callable[[Trajectory], Awaitable[None] | None]


@dataclass
class Agent:
    """One model, its tools and its limits; `run` plays one sample's conversation to its end."""

    model: Model
    tools: Sequence[Tool]
    limits: AgentLimits = field(default_factory=AgentLimits)
    settings: GenerationSpec = field(default_factory=GenerationSpec)
    tool_choice: ToolChoice | None = None  # every turn's (None: the server's default, auto)
    first_choice: ToolChoice | None = None  # the first turn's, when it differs (a named function: that call first)
    declared: Sequence[ToolDef] = ()  # functions offered that nothing runs (their calls are the answer)
    calls_answer: bool = False  # a turn with calls ends the trajectory (`called`), its calls the answer, none run

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools] + [d.name for d in self.declared]
        if len(set(names)) != len(names):
            raise ValueError(f"two tools share a name: {sorted(n for n in names if names.count(n) > 1)}")
        self._by_name = {t.name: t for t in self.tools}
        self._offered = tuple(x.definition for x in self.tools) + tuple(self.declared)

    async def run(self, messages: Sequence[Message], on_turn: OnTurn | None = None) -> Trajectory:
        """The trajectory from `messages` until the model answers or a limit stops it; `on_turn` is called after
        every turn (to keep it durable)."""
        require(self.model, {Capability.GENERATE, Capability.TOOLS})
        t = Trajectory(messages=list(messages), tools=list(self._offered))
        start = time.monotonic()
        deadline = start + self.limits.wall_time_s if self.limits.wall_time_s is not None else None
        while t.stop is None:
            t.stop, t.stop_detail = await self._turn(t, start, deadline)
            t.wall_s = time.monotonic() - start
            if on_turn is not None:
                maybe = on_turn(t)
                if inspect.isawaitable(maybe):
                    await maybe
        return t

    def _left(self, deadline: float | None) -> float | None:
        return None if deadline is None else deadline - time.monotonic()

    async def _turn(self, t: Trajectory, start: float, deadline: float | None) -> tuple[AgentStop | None, str | None]:
        """One model turn and its calls; how the trajectory ends, when it does now."""
        lim = self.limits
        if len(t.turns) >= lim.max_turns:
            return "max_turns", f"{lim.max_turns} turns"
        left = self._left(deadline)
        if left is not None and left <= 0:
            return "wall_time", f"{lim.wall_time_s:g}s"
        choice = self.first_choice if not t.turns and self.first_choice is not None else self.tool_choice
        request = GenerateRequest(tuple(t.conversation()), self.settings, tools=self._offered, tool_choice=choice)
        began = time.monotonic() - start
        try:
            async with asyncio.timeout(left):
                [g] = await self.model.generate([request])
        except TimeoutError:
            return "wall_time", f"{lim.wall_time_s:g}s (waiting for the model)"
        turn = _turn_of(g, len(t.turns), began)
        t.turns.append(turn)
        if g.error is not None:
            return "model_error", g.error
        if not g.tool_calls:
            return "answered", None
        if self.calls_answer:
            return "called", f"{len(g.tool_calls)} calls"
        stop = await self._calls(t, turn, deadline)
        if stop is not None:
            return stop
        if lim.max_tokens is not None and t.input_tokens + t.output_tokens >= lim.max_tokens:
            return "max_tokens", f"{t.input_tokens + t.output_tokens} of {lim.max_tokens} tokens"
        return None, None

    async def _calls(self, t: Trajectory, turn: Turn, deadline: float | None) -> tuple[AgentStop, str] | None:
        """Run the turn's calls in order, each refused, run or left (not_run) once a limit is reached."""
        lim = self.limits
        ran = t.tool_calls - len(turn.tool_calls)  # calls of the turns before this one
        stop: tuple[AgentStop, str] | None = None
        for call in turn.tool_calls:
            left = self._left(deadline)
            if stop is None and ran >= lim.max_tool_calls:
                stop = "max_tool_calls", f"{lim.max_tool_calls} calls ({len(turn.tool_calls)} in the last reply)"
            if stop is None and left is not None and left <= 0:
                stop = "wall_time", f"{lim.wall_time_s:g}s (running tools)"
            if stop is not None:
                turn.results.append(ToolResult(call_id=call.id, name=call.name, status="not_run",
                                               content=f"not run: {stop[0]} reached"))
                continue
            ran += 1
            problem = call_problem(call, self._by_name)
            if problem is not None:
                turn.results.append(_refused(call, problem))
                continue
            timeout = lim.tool_timeout_s if left is None else max(0.0, min(lim.tool_timeout_s, left))
            turn.results.append(await run_call(self._by_name[call.name], call, lim, timeout))
        return stop


def stop_outcome(t: Trajectory) -> Outcome | None:
    """The sample's outcome when its trajectory ended without an answer: a limit is `truncated` (no answer, as a
    token limit is; `--truncated-as` decides, and `trajectory.stop` names the limit), a failed request `error`;
    None when the model answered (the scorer reads the answer)."""
    if t.stop in LIMIT_STOPS:
        return Outcome.TRUNCATED
    return Outcome.ERROR if t.stop == "model_error" else None


def _turn_of(g: Generation, index: int, began: float) -> Turn:
    return Turn(index=index, text=g.text, reasoning=g.reasoning, tool_calls=list(g.tool_calls),
                finish_reason=g.finish_reason, input_tokens=g.input_tokens, output_tokens=g.output_tokens,
                latency_s=g.latency_s, started_s=max(0.0, began), error=g.error, cached=g.cached)


__all__ = ["Agent", "OnTurn", "Tool", "ToolOutput", "cut", "python_tool", "run_call", "stop_outcome"]
