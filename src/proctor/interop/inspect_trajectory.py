"""A sample's trajectory in Inspect's log schema (used by `inspect_export`): the conversation as the sample's
`messages` (assistant turns with their `tool_calls`, one `tool` message per call) and the transcript as its
`events` (a `ModelEvent` per turn, a `ToolEvent` per call, a `SampleLimitEvent` when a limit stopped it).

Arguments: Inspect's `ToolCall.arguments` is an object. Arguments that are a JSON object are that object; any
other text (not JSON, JSON that is not an object, nested too deep) is `{}` with the reason in `parse_error` (as
Inspect's own parser does) and the text as sent in the call's `view` (a text block; `inspect view` shows it in
place of the arguments) and in the tool event's `metadata["arguments_as_sent"]`.

Times: a trajectory records each turn's offset from its start (`started_s`), not the clock; the events are dated
the run's start plus that offset (their order and spacing are the trajectory's; their dates are not).
Each model event's input is a range of the sample's messages (`input_refs` into `events_data`, as Inspect's own
condensed logs are): a 50-turn conversation is written three times (messages, pool, tool events), not 50 times.
(An inspect_ai older than its `events_data` gets each model event's whole input.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core.tools import ToolCall, ToolDef, parsed_arguments
from ..core.trajectory import LIMIT_STOPS, ToolResult, Trajectory, Turn

if TYPE_CHECKING:
    from inspect_ai.event import Event
    from inspect_ai.log import EvalSampleLimit, EventsData
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, GenerateConfig, ModelOutput, StopReason
    from inspect_ai.tool import ToolCall as InspectCall
    from inspect_ai.tool import ToolCallError, ToolInfo

# proctor's call status → Inspect's ToolCallError type (ok: no error)
_ERRORS = {"error": "unknown", "timeout": "timeout", "unknown_function": "parsing", "bad_arguments": "parsing",
           "not_run": "limit"}
_LIMITS = {"max_turns": "turn", "max_tokens": "token", "wall_time": "time", "max_tool_calls": "custom"}
_STOPS: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens", "tool_calls": "tool_calls",
                                 "content_filter": "content_filter"}


@dataclass(frozen=True)
class Transcript:
    """What a trajectory becomes in an Inspect sample."""

    messages: list[ChatMessage]  # the opening, then each turn and its tool messages
    events: list[Event]
    events_data: EventsData | None  # the message pool the model events' input_refs point into (None: not pooled)
    output: ModelOutput  # the last turn's
    limit: EvalSampleLimit | None


def inspect_call(call: ToolCall) -> InspectCall:
    """Inspect's ToolCall of one call: its arguments as an object, or `{}`, the reason and the text as sent."""
    from inspect_ai.tool import ToolCall as InspectCall
    from inspect_ai.tool import ToolCallContent

    try:
        return InspectCall(id=call.id, function=call.name, arguments=parsed_arguments(call))
    except ValueError as e:
        return InspectCall(id=call.id, function=call.name, arguments={}, parse_error=str(e),
                           view=ToolCallContent(title=f"{call.name}: arguments as sent", format="text",
                                                   content=call.arguments))


def _assistant(turn: Turn, msg_id: str) -> ChatMessageAssistant:
    from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText

    calls = [inspect_call(c) for c in turn.tool_calls] or None
    content: str | list[Any] = turn.text
    if turn.reasoning:
        content = [ContentReasoning(reasoning=turn.reasoning), ContentText(text=turn.text)]
    return ChatMessageAssistant(id=msg_id, content=content, tool_calls=calls, source="generate")


def _tool_error(r: ToolResult) -> ToolCallError | None:
    from inspect_ai.tool import ToolCallError

    kind = _ERRORS.get(r.status)
    return None if kind is None else ToolCallError(type=kind, message=r.content)  # type: ignore[arg-type]


def tool_info(d: ToolDef) -> ToolInfo:
    """Inspect's ToolInfo of a function offered; a schema its ToolParams cannot hold is kept in the description."""
    from inspect_ai.tool import ToolInfo, ToolParams
    from pydantic import ValidationError

    try:
        return ToolInfo(name=d.name, description=d.description, parameters=ToolParams.model_validate(d.parameters))
    except ValidationError:
        return ToolInfo(name=d.name, description=f"{d.description}\n\nparameters (JSON schema): {d.parameters}")


def _limit(t: Trajectory) -> tuple[str, float | None] | None:
    """The limit that stopped the trajectory as Inspect's limit type and value (read from `stop_detail`)."""
    if t.stop not in LIMIT_STOPS:
        return None
    m = re.search(r"of (\d+(?:\.\d+)?)", t.stop_detail or "") or re.match(r"(\d+(?:\.\d+)?)", t.stop_detail or "")
    return _LIMITS[t.stop or ""], float(m.group(1)) if m else None


@dataclass(frozen=True)
class _Context:
    model: str  # Inspect's provider/model
    started: datetime  # the run's start: the events' dates are it plus the turns' offsets
    config: GenerateConfig
    tools: list[ToolInfo]
    pooled: bool  # the model events' input as ranges of the sample's messages (else each one whole)


def _output(ctx: _Context, turn: Turn, message: ChatMessageAssistant) -> ModelOutput:
    from inspect_ai.model import ChatCompletionChoice, ModelOutput, ModelUsage

    usage = None
    if turn.input_tokens is not None or turn.output_tokens is not None:
        i, o = turn.input_tokens or 0, turn.output_tokens or 0
        usage = ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o)
    if turn.error is not None:
        return ModelOutput(model=ctx.model, error=turn.error, time=turn.latency_s, usage=usage)
    stop = _STOPS.get(turn.finish_reason or "", "tool_calls" if turn.tool_calls else "unknown")
    return ModelOutput(model=ctx.model, choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
                       completion=turn.text, usage=usage, time=turn.latency_s)


def pooled() -> bool:
    """Whether this inspect_ai's model events take their input from the sample's pool (`input_refs`, newer
    releases); else each model event holds its whole input."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import EvalSample

    return "input_refs" in ModelEvent.model_fields and "events_data" in EvalSample.model_fields


def _turn_events(ctx: _Context, turn: Turn, history: Sequence[ChatMessage], tool_ids: Sequence[str]) -> tuple[
        list[Event], ModelOutput]:
    """One turn's model event (its input: `history`, the messages before it) and its calls' tool events."""
    from inspect_ai.event import ModelEvent, ToolEvent

    message = _assistant(turn, f"turn-{turn.index}")
    output = _output(ctx, turn, message)
    at = turn.started_s
    latency = turn.latency_s or 0.0
    source = {"input": [], "input_refs": [(0, len(history))]} if ctx.pooled else {"input": list(history)}
    events: list[Event] = [ModelEvent(
        **source, model=ctx.model, tools=ctx.tools, tool_choice="auto",
        config=ctx.config, output=output, error=turn.error, cache="read" if turn.cached else None,
        timestamp=ctx.started + timedelta(seconds=at), completed=ctx.started + timedelta(seconds=at + latency),
        working_start=at, working_time=latency)]
    at += latency
    for call, result, msg_id in zip(turn.tool_calls, turn.results, tool_ids, strict=False):
        ic = inspect_call(call)
        events.append(ToolEvent(
            id=call.id, function=call.name, arguments=ic.arguments, view=ic.view, result=result.content,
            truncated=(result.size_bytes, len(result.content.encode())) if result.truncated else None,
            error=_tool_error(result), timestamp=ctx.started + timedelta(seconds=at),
            completed=ctx.started + timedelta(seconds=at + result.wall_s), working_start=at,
            working_time=result.wall_s, message_id=msg_id,
            metadata={"status": result.status, "size_bytes": result.size_bytes,
                      **({"arguments_as_sent": call.arguments} if ic.parse_error else {})}))
        at += result.wall_s
    return events, output


def transcript(t: Trajectory, opening: list[ChatMessage], ctx: _Context) -> Transcript:
    """The trajectory's messages (after `opening`), events, last output and limit, in Inspect's schema."""
    from inspect_ai.event import SampleLimitEvent
    from inspect_ai.log import EvalSampleLimit
    from inspect_ai.model import ChatMessageTool, ModelOutput

    messages = list(opening)
    events: list[Event] = []
    output = ModelOutput(model=ctx.model)
    for turn in t.turns:
        ids = [f"tool-{turn.index}-{k}" for k in range(len(turn.results))]
        turn_events, output = _turn_events(ctx, turn, messages, ids)
        events.extend(turn_events)
        if turn.error is not None:
            continue
        messages.append(output.message)
        messages.extend(ChatMessageTool(id=i, content=r.content, tool_call_id=r.call_id, function=r.name,
                                        error=_tool_error(r)) for i, r in zip(ids, turn.results, strict=True))
    limit = None
    if (hit := _limit(t)) is not None:
        kind, value = hit
        message = f"{t.stop}: {t.stop_detail or ''}".strip(": ")
        events.append(SampleLimitEvent(type=kind, message=message, limit=value,  # type: ignore[arg-type]
                                       timestamp=ctx.started + timedelta(seconds=t.wall_s), working_start=t.wall_s))
        limit = EvalSampleLimit(type=kind, limit=value, reason=message) if value is not None else None  # type: ignore[arg-type]
    return Transcript(messages=messages, events=events,
                      events_data={"messages": messages, "calls": []} if ctx.pooled else None, output=output,
                      limit=limit)


def context(model: str, started_at: str, config: GenerateConfig, tools: Sequence[ToolDef]) -> _Context:
    """What every event of a run's trajectory shares: the model, the run's start, its generate config, the tools."""
    return _Context(model=model, started=datetime.fromisoformat(started_at), config=config,
                    tools=[tool_info(d) for d in tools], pooled=pooled())


__all__ = ["Transcript", "context", "inspect_call", "tool_info", "transcript"]
