"""The agent loop (scoring.agent): tools offered, calls run, results returned, every turn recorded; every hostile
case (bad JSON, unknown or empty names, 300 calls in a reply, a tool that raises, hangs or returns 100 MB, a model
that never stops calling, one that fails or stalls) ends in a result or a named stop, never a traceback or a hang."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Sequence

import pytest

from proctor.core.model import Capability, GenerateRequest, Generation, Message, ModelBase
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolCall, ToolChoice
from proctor.core.trajectory import Trajectory
from proctor.log.runlog import Outcome
from proctor.models.openai import OpenAIModel
from proctor.scoring.agent import Agent, Tool, cut, python_tool, stop_outcome
from proctor.testing import LocalServer, serve
from proctor.util.errors import CapabilityError

Script = Callable[[GenerateRequest], Generation]


class FakeModel(ModelBase):
    """Answers each request by `script`; records the requests."""

    capabilities = frozenset({Capability.GENERATE, Capability.TOOLS})

    def __init__(self, script: Script, delay: float = 0.0) -> None:
        self.name, self.script, self.delay = "fake", script, delay
        self.requests: list[GenerateRequest] = []

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.requests.extend(requests)
        if self.delay:
            await asyncio.sleep(self.delay)
        return [self.script(r) for r in requests]


def add(a: int, b: int = 0) -> int:
    """Add two numbers.

    More words the model need not read."""
    return a + b


async def slow_echo(text: str) -> str:
    await asyncio.sleep(0.01)
    return text


def calls(*pairs: tuple[str, str]) -> Generation:
    return Generation(tool_calls=tuple(ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(pairs)),
                      finish_reason="tool_calls", input_tokens=10, output_tokens=5)


def once_then_answer(*pairs: tuple[str, str]) -> Script:
    """Calls `pairs` on the first turn, then answers with the results it read."""
    def script(r: GenerateRequest) -> Generation:
        if not any(m.role == "tool" for m in r.messages):
            return calls(*pairs)
        return Generation(text="read: " + " | ".join(m.content for m in r.messages if m.role == "tool"),
                          input_tokens=20, output_tokens=3)
    return script


def run(model: ModelBase, tools: Sequence[Tool], limits: AgentLimits | None = None, **kw: object) -> Trajectory:
    agent = Agent(model, tools, limits or AgentLimits(), **kw)  # type: ignore[arg-type]
    return asyncio.run(agent.run([Message("user", "go")]))


TOOLS = [python_tool(add, name="math.add"), python_tool(slow_echo, name="echo")]


def test_a_python_functions_schema_is_read_from_its_signature() -> None:
    d = TOOLS[0].definition
    assert (d.name, d.description) == ("math.add", "Add two numbers.")
    assert d.parameters == {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                            "required": ["a"]}


def test_calls_run_results_come_back_and_every_turn_is_recorded() -> None:
    model = FakeModel(once_then_answer(("math.add", '{"a": 2, "b": 3}'), ("echo", '{"text": "hi"}')))
    t = run(model, TOOLS)
    assert t.stop == "answered" and t.answer == "read: 5 | hi"
    assert [r.status for r in t.turns[0].results] == ["ok", "ok"] and t.tool_calls == 2
    assert (t.input_tokens, t.output_tokens, len(t.turns)) == (30, 8, 2)
    second = model.requests[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "tool", "tool"]
    assert second.messages[2] == Message("tool", "5", tool_call_id="c0")
    assert [x.name for x in second.tools] == ["math.add", "echo"]
    assert t.turns[1].started_s >= t.turns[0].started_s and t.wall_s > 0


@pytest.mark.parametrize(("name", "arguments", "status", "says"), [
    ("math.add", '{"a": ', "bad_arguments", "not JSON"),
    ("math.add", '{"c": 1}', "bad_arguments", "bad arguments"),
    ("math.add", '"just text"', "bad_arguments", "not an object"),
    ("rm -rf /", "{}", "unknown_function", "no function"),
    ("", "{}", "unknown_function", "names no function"),
])
def test_a_call_that_cannot_be_run_is_answered_with_what_is_wrong(name: str, arguments: str, status: str,
                                                                   says: str) -> None:
    t = run(FakeModel(once_then_answer((name, arguments))), TOOLS)
    [result] = t.turns[0].results
    assert (result.status, t.stop) == (status, "answered") and says in result.content


def test_a_tool_that_raises_is_its_error() -> None:
    def boom() -> None:
        raise RuntimeError("disk on fire")

    t = run(FakeModel(once_then_answer(("boom", ""))), [python_tool(boom)])
    assert t.turns[0].results[0].status == "error" and "disk on fire" in t.turns[0].results[0].content


def test_a_tool_that_exits_or_returns_the_unprintable_is_an_error_not_a_crash() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

        __str__ = __repr__

    def leave() -> None:
        raise SystemExit(3)

    def odd() -> Unprintable:
        return Unprintable()

    def raw() -> bytes:
        return b"\xff\xfeok"

    t = run(FakeModel(once_then_answer(("leave", ""), ("odd", ""), ("raw", ""))),
            [python_tool(leave), python_tool(odd), python_tool(raw)])
    assert [r.status for r in t.turns[0].results] == ["error", "error", "ok"]
    assert "SystemExit" in t.turns[0].results[0].content and t.turns[0].results[2].content.endswith("ok")


def test_a_tool_that_hangs_is_stopped_at_its_time_limit() -> None:
    def hang() -> str:
        time.sleep(3600)
        return "never"

    async def hang_async() -> str:
        await asyncio.sleep(3600)
        return "never"

    t0 = time.monotonic()
    t = run(FakeModel(once_then_answer(("hang", "{}"), ("hang_async", "{}"))),
            [python_tool(hang), python_tool(hang_async)], AgentLimits(tool_timeout_s=0.3))
    assert time.monotonic() - t0 < 5
    assert [r.status for r in t.turns[0].results] == ["timeout", "timeout"] and t.stop == "answered"


def test_a_tool_that_returns_100_mb_is_cut_and_says_so() -> None:
    def flood() -> str:
        return "x" * 100_000_000

    t = run(FakeModel(once_then_answer(("flood", "{}"))), [python_tool(flood)], AgentLimits(max_result_bytes=1000))
    [r] = t.turns[0].results
    assert r.truncated and r.size_bytes == 100_000_000 and len(r.content) < 1100 and "cut: 1000 of 100000000" in r.content


def test_cut_never_splits_a_character() -> None:
    text, size, was_cut = cut("é" * 10, 5)
    assert was_cut and size == 20 and text.startswith("éé\n[cut")


def test_300_calls_in_one_reply_run_what_the_limit_leaves_and_stop() -> None:
    t = run(FakeModel(once_then_answer(*[("math.add", '{"a": 1}')] * 300)), TOOLS, AgentLimits(max_tool_calls=50))
    statuses = [r.status for r in t.turns[0].results]
    assert t.stop == "max_tool_calls" and len(t.turns[0].tool_calls) == 300
    assert statuses.count("ok") == 50 and statuses.count("not_run") == 250 and t.answer is None


def test_a_model_that_never_stops_calling_hits_max_turns() -> None:
    t = run(FakeModel(lambda r: calls(("math.add", '{"a": 1}'))), TOOLS, AgentLimits(max_turns=4))
    assert (t.stop, len(t.turns), t.tool_calls) == ("max_turns", 4, 4)


def test_the_token_limit_and_the_wall_time_stop_it() -> None:
    forever = FakeModel(lambda r: calls(("math.add", '{"a": 1}')))
    t = run(forever, TOOLS, AgentLimits(max_tokens=40))
    assert t.stop == "max_tokens" and len(t.turns) == 3  # 15 tokens a turn
    stalled = FakeModel(lambda r: calls(("math.add", '{"a": 1}')), delay=0.2)
    t0 = time.monotonic()
    t = run(stalled, TOOLS, AgentLimits(wall_time_s=0.5, max_turns=1000))
    assert t.stop == "wall_time" and time.monotonic() - t0 < 2


def test_a_failed_model_request_ends_the_trajectory_as_model_error() -> None:
    t = run(FakeModel(lambda r: Generation(error="HTTP 500")), TOOLS)
    assert (t.stop, t.stop_detail, len(t.turns)) == ("model_error", "HTTP 500", 1)
    assert stop_outcome(t) is Outcome.ERROR


def test_a_limit_is_a_truncated_sample_and_an_answer_is_the_scorers() -> None:
    limited = run(FakeModel(lambda r: calls(("math.add", '{"a": 1}'))), TOOLS, AgentLimits(max_turns=2))
    answered = run(FakeModel(once_then_answer(("math.add", '{"a": 1}'))), TOOLS)
    assert (stop_outcome(limited), stop_outcome(answered)) == (Outcome.TRUNCATED, None)


def test_each_turn_is_handed_over_as_it_ends() -> None:
    seen: list[int] = []
    agent = Agent(FakeModel(once_then_answer(("math.add", '{"a": 1}'))), TOOLS)
    asyncio.run(agent.run([Message("user", "go")], on_turn=lambda t: seen.append(len(t.turns))))
    assert seen == [1, 2]


def test_the_first_turns_choice_and_the_rest() -> None:
    model = FakeModel(once_then_answer(("math.add", '{"a": 1}')))
    run(model, TOOLS, first_choice=ToolChoice(function="math.add"), tool_choice=ToolChoice("none"))
    assert [r.tool_choice for r in model.requests] == [ToolChoice(function="math.add"), ToolChoice("none")]


def test_a_model_without_tool_calling_is_refused_before_anything_runs() -> None:
    class Plain(FakeModel):
        capabilities = frozenset({Capability.GENERATE})

    with pytest.raises(CapabilityError, match="cannot tools"):
        run(Plain(lambda r: Generation(text="x")), TOOLS)
    with pytest.raises(ValueError, match="share a name"):
        Agent(FakeModel(lambda r: Generation()), [TOOLS[0], TOOLS[0]])


# -- end to end, through the OpenAI backend and the stand-in server ------------------------------------------


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with serve() as s:
        yield s


def _served(srv: LocalServer, limits: AgentLimits, **config: object) -> Trajectory:
    srv.configure(**config)

    async def go() -> Trajectory:
        model = OpenAIModel("m", base_url=srv.base_url, api_key="x", max_retries=0)
        try:
            return await Agent(model, TOOLS, limits).run([Message("user", "add 2 and 3")])
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_over_http_a_call_goes_out_its_result_comes_back_and_the_model_answers(srv: LocalServer) -> None:
    t = _served(srv, AgentLimits(), tool_replies=[[{"name": "math_add", "arguments": {"a": 2, "b": 3}}]],
                answer_with_result=True)
    assert t.turns[0].tool_calls[0].name == "math.add" and t.turns[0].results[0].content == "5"
    assert t.stop == "answered" and t.answer == "result: 5"
    sent = srv.stats()["last_body"]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["content"] == "5"


def test_over_http_hostile_replies_end_in_results_and_limits(srv: LocalServer) -> None:
    junk = [{"name": "math_add", "arguments": "{not json"}, {"name": "", "arguments": "{}"},
            {"name": "nope", "arguments": "{}"}] + [{"name": "echo", "arguments": json.dumps({"text": "x"})}] * 300
    t = _served(srv, AgentLimits(max_tool_calls=120, tool_timeout_s=5), tool_replies=[junk])
    statuses = [r.status for r in t.turns[0].results]
    assert t.stop == "max_tool_calls" and statuses[:3] == ["bad_arguments", "unknown_function", "unknown_function"]
    assert statuses.count("ok") == 117 and statuses.count("not_run") == 183
    forever = _served(srv, AgentLimits(max_turns=5), tool_replies=[[{"name": "echo", "arguments": '{"text": "y"}'}]],
                      tool_repeat=True)
    assert (forever.stop, len(forever.turns)) == ("max_turns", 5)
    srv.configure(tool_replies=[], tool_repeat=False, answer_with_result=False)
