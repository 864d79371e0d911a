"""MCP servers as tool sources (scoring.mcp_tools), against a server written with the reference SDK
(tests/scoring/mcp_server.py) over stdio and streamable HTTP: its tools are listed, called by a scripted model
through the agent loop and their results (text, structured content, isError) recorded; a server that does not
start, dies, hangs or floods ends in a named error or result, never a traceback or a hang."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from proctor.core.model import GenerateRequest, Generation, Message
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolCall
from proctor.core.trajectory import Trajectory
from proctor.models.openai import OpenAIModel
from proctor.scoring.agent import Agent
from proctor.scoring.mcp_tools import McpServer, McpServerError, mcp_tools
from proctor.testing import serve
from scoring.test_agent import FakeModel

SERVER = Path(__file__).with_name("mcp_server.py")
STDIO = McpServer(command=(sys.executable, str(SERVER)), prefix="t.")


def scripted(*turns: list[tuple[str, dict[str, Any]]]) -> FakeModel:
    """Turn k makes the calls `turns[k]`; past them the model answers with the results it read."""
    def script(r: GenerateRequest) -> Generation:
        k = sum(m.role == "assistant" for m in r.messages)
        if k < len(turns):
            return Generation(tool_calls=tuple(ToolCall(f"c{k}.{i}", n, json.dumps(a))
                                               for i, (n, a) in enumerate(turns[k])), finish_reason="tool_calls")
        return Generation(text=" | ".join(m.content for m in r.messages if m.role == "tool"))
    return FakeModel(script)


Plan = tuple[Any, AgentLimits]


def run_all(server: McpServer, *plans: Plan) -> tuple[list[Trajectory], list[str]]:
    """Each (model, limits) played in turn over one connection to `server` (a server starts in seconds)."""
    async def go() -> tuple[list[Trajectory], list[str]]:
        async with mcp_tools(server) as tools:
            out = [await Agent(m, tools, lim).run([Message("user", "go")]) for m, lim in plans]
            return out, [x.name for x in tools]
    return asyncio.run(go())


def run(server: McpServer, model: Any, limits: AgentLimits | None = None) -> Trajectory:
    return run_all(server, (model, limits or AgentLimits()))[0][0]


def test_stdio_tools_are_listed_called_and_recorded_and_hostile_calls_end_in_results() -> None:
    model = scripted([("t.add", {"a": 2, "b": 3}), ("t.echo", {"text": "hi"})], [("t.fail", {"message": "no disk"})])
    refused = scripted([("t.add", {"a": "two"})])
    hangs = scripted([("t.hang", {"seconds": 60})], [("t.echo", {"text": "after"})])
    floods = scripted([("t.flood", {"size": 500_000})])
    t0 = time.monotonic()
    (t, bad, hung, flooded), names = run_all(STDIO, (model, AgentLimits()), (refused, AgentLimits()),
                                             (hangs, AgentLimits(tool_timeout_s=0.5)),
                                             (floods, AgentLimits(max_result_bytes=1000)))
    assert time.monotonic() - t0 < 30
    assert names == ["t.add", "t.echo", "t.fail", "t.hang", "t.flood", "t.die"]
    add = t.tools[0]
    assert (add.description, add.parameters["required"]) == ("Add two numbers.", ["a"])
    assert add.parameters["properties"]["a"]["type"] == "integer"
    first, second = t.turns[0].results, t.turns[1].results
    assert [(r.status, r.content, r.structured) for r in first] == [("ok", "5", {"result": 5}),
                                                                   ("ok", "hi", {"result": "hi"})]
    assert [(r.status, r.content) for r in second] == [("error", "Error executing tool fail: no disk")]  # isError
    assert t.stop == "answered" and t.answer == "5 | hi | Error executing tool fail: no disk"
    assert model.requests[0].tools[0].name == "t.add"
    # arguments the server refuses are its error
    [r] = bad.turns[0].results
    assert r.status == "error" and "valid integer" in r.content
    # a call that hangs is stopped at tool_timeout_s, and the server still answers the next
    assert [r.status for r in hung.turns[0].results] == ["timeout"]
    assert [(r.status, r.content) for r in hung.turns[1].results] == [("ok", "after")]
    # a huge result is cut and says so; its structured copy (past the limit too) is dropped
    [r] = flooded.turns[0].results
    assert r.truncated and r.size_bytes == 500_000 and "cut: 1000 of 500000" in r.content and r.structured is None


def test_a_server_that_dies_mid_run_is_the_calls_error_and_every_later_calls() -> None:
    t = run(STDIO, scripted([("t.die", {})], [("t.echo", {"text": "x"})]))
    assert [r.status for turn in t.turns[:2] for r in turn.results] == ["error", "error"]
    assert "the MCP server is gone" in t.turns[1].results[0].content and t.stop == "answered"


def test_a_result_of_50_mb_is_a_timeout_not_a_hang() -> None:
    """The SDK reads a whole stdio line before proctor sees it, slower as it grows: the call times out."""
    t0 = time.monotonic()
    t = run(STDIO, scripted([("t.flood", {"size": 50_000_000})]), AgentLimits(tool_timeout_s=1))
    assert [r.status for r in t.turns[0].results] == ["timeout"] and t.stop == "answered"
    assert time.monotonic() - t0 < 40


@pytest.mark.parametrize(("command", "says"), [
    (("/no/such/server",), "did not start"),
    ((sys.executable, "-c", "import sys; print('cannot start', file=sys.stderr); sys.exit(1)"), "did not start"),
    ((sys.executable, "-c", "import time; time.sleep(60)"), "no tool list within 1s"),
])
def test_a_server_that_does_not_start_is_one_line(command: tuple[str, ...], says: str) -> None:
    t0 = time.monotonic()
    with pytest.raises(McpServerError, match=says) as e:
        run(McpServer(command=command, start_timeout_s=1), scripted())
    assert "\n" not in str(e.value) and time.monotonic() - t0 < 15


def test_a_server_is_a_command_or_a_url() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        McpServer()
    with pytest.raises(ValueError, match="exactly one"):
        McpServer(command=("x",), url="http://127.0.0.1:1/mcp")


# -- streamable HTTP ----------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server() -> Iterator[str]:
    """tests/scoring/mcp_server.py over streamable HTTP on 127.0.0.1 (a port of its own); its URL."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server() as url:
        yield url


def test_over_http_tools_are_listed_and_called_through_the_stand_in_model(http_url: str) -> None:
    """The model is the stand-in OpenAI server with scripted tool calls (wire names: `.` as `_`)."""
    with serve() as srv:
        srv.configure(tool_replies=[[{"name": "t_add", "arguments": {"a": 2, "b": 3}}]], answer_with_result=True)

        async def go() -> Trajectory:
            model = OpenAIModel("m", base_url=srv.base_url, api_key="x", max_retries=0)
            try:
                async with mcp_tools(McpServer(url=http_url, prefix="t.")) as tools:
                    return await Agent(model, tools).run([Message("user", "add 2 and 3")])
            finally:
                await model.aclose()

        t = asyncio.run(go())
    [r] = t.turns[0].results
    assert (t.turns[0].tool_calls[0].name, r.status, r.content, r.structured) == ("t.add", "ok", "5", {"result": 5})
    assert t.stop == "answered" and t.answer == "result: 5"


def test_over_http_a_hang_is_stopped(http_url: str) -> None:
    t = run(McpServer(url=http_url), scripted([("hang", {"seconds": 60})], [("echo", {"text": "y"})]),
               AgentLimits(tool_timeout_s=0.5))
    assert [r.status for turn in t.turns[:2] for r in turn.results] == ["timeout", "ok"]


def test_over_http_a_server_that_dies_mid_run_is_the_calls_error_not_a_crash() -> None:
    """The SDK's HTTP transport fails in its own task group when the server goes: that ends the connection's
    task, never the agent's (the trajectory is played to its end)."""
    with http_server() as url:
        t = run(McpServer(url=url), scripted([("die", {})], [("echo", {"text": "x"})]))
    assert [r.status for turn in t.turns[:2] for r in turn.results] == ["error", "error"]
    assert "the MCP server is gone" in t.turns[1].results[0].content and t.stop == "answered"


def test_a_url_nobody_serves_is_one_line() -> None:
    with pytest.raises(McpServerError, match="MCP server http://127.0.0.1"):
        run(McpServer(url=f"http://127.0.0.1:{_free_port()}/mcp", start_timeout_s=5), scripted())
