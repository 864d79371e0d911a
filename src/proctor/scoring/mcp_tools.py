"""MCP servers as tool sources for the agent loop (`proctor.scoring.agent`), proctor as the client through the
`mcp` package (the `mcp` extra; imported only when a server is opened): a command line run as a subprocess and
spoken to over its stdin/stdout, or a URL spoken to over streamable HTTP (docs/agents.md).

`mcp_tools(server)` opens the server, lists its tools (name, description, input schema: proctor's `ToolDef`s) and
yields them as `Tool`s whose calls go to the server; each result comes back as a `ToolOutput` (its text content,
its structured content, its `isError`). A server that does not start (or not within `start_timeout_s`) is one
`McpServerError` line; one that dies, answers with a protocol error or something that is not a tool result is
that call's `error`; one that hangs is stopped at the agent's `tool_timeout_s` (`timeout`); a huge result is cut
at `max_result_bytes` as any tool's is.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from ..core.tools import ToolDef
from ..util.errors import ProctorError
from .agent import Tool, ToolOutput

if TYPE_CHECKING:
    from mcp import Client

MAX_PAGES = 100  # tools/list pages read from one server (a server that pages forever is refused)


class McpServerError(ProctorError):
    """An MCP server could not be used: it did not start, did not answer the handshake or its tool list."""


@dataclass(frozen=True)
class McpServer:
    """An MCP server to take tools from: `command` (a command line, run over stdio) or `url` (streamable HTTP).
    `prefix` goes before each tool's name (two servers with a tool of the same name); `start_timeout_s` bounds
    the start, the handshake and the tool list."""

    command: Sequence[str] = ()
    url: str | None = None
    env: Mapping[str, str] | None = field(default=None, hash=False)  # added to the SDK's default environment
    cwd: str | None = None
    prefix: str = ""
    start_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ValueError("an MCP server is a command line or a URL, exactly one of them")
        if self.start_timeout_s <= 0:
            raise ValueError(f"start_timeout_s must be positive, not {self.start_timeout_s}")

    @property
    def label(self) -> str:
        """The server as a message names it: its URL, or its command line (cut)."""
        return self.url if self.url is not None else " ".join(self.command)[:120]


def _import_mcp() -> Any:
    try:
        import mcp
    except ImportError:
        raise McpServerError("MCP servers need the `mcp` package: pip install 'proctor-eval[mcp]'") from None
    return mcp


def _transport(server: McpServer, errlog: TextIO) -> Any:
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if server.url is not None:
        return streamable_http_client(server.url)
    command, *args = server.command
    params = StdioServerParameters(command=command, args=args, env=dict(server.env) if server.env else None,
                                   cwd=server.cwd)
    return stdio_client(params, errlog=errlog)


def _why(e: BaseException) -> str:
    """An exception (or the first of a group's) as one short line."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:300]}" if text else type(e).__name__


def _tail(errlog: IO[str]) -> str:
    """The last line the server wrote to stderr, as a hint (empty: none)."""
    try:
        errlog.seek(0)
        lines = [x.strip() for x in errlog.read()[-4000:].splitlines() if x.strip()]
    except (OSError, ValueError):
        return ""
    return f" (its stderr: {lines[-1][:200]})" if lines else ""


async def _listed(client: Client) -> list[Any]:
    """Every tool the server lists, page by page."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise McpServerError(f"its tool list runs past {MAX_PAGES} pages")


def _text_of(block: Any) -> str:
    """One content block as text: text as is, an embedded text resource's text, anything else named."""
    kind = getattr(block, "type", "?")
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        return str(text) if text is not None else f"[resource {inner.uri}: {getattr(inner, 'mime_type', None)}]"
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {len(block.data)} base64 characters]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}]"
    return f"[{kind} content]"


def output_of(result: Any) -> ToolOutput:
    """An MCP `CallToolResult` as the agent records it: its content blocks' text (or, with none, its structured
    content as JSON), its structured content, its `isError`."""
    structured = result.structured_content
    text = "\n".join(_text_of(b) for b in result.content)
    if not result.content and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    return ToolOutput(text, structured, bool(result.is_error))


def _tool(client: Client, server: McpServer, listed: Any) -> Tool:
    """One listed MCP tool as an agent `Tool`: a call goes to the server, whatever fails is the call's error."""
    from mcp import MCPError
    from pydantic import ValidationError

    name = listed.name

    async def call(**arguments: Any) -> ToolOutput:
        try:
            return output_of(await client.call_tool(name, arguments))
        except MCPError as e:
            gone = "closed" in e.error.message.lower()
            what = "is gone" if gone else "answered with an error"
            return ToolOutput(f"the MCP server {what}: {e.error.message[:500]}", error=True)
        except ValidationError as e:
            return ToolOutput(f"the MCP server's reply is not a tool result: {_why(e)}", error=True)
        except Exception as e:  # noqa: BLE001 - the connection broke under the call (anyio's closed streams, OSError)
            return ToolOutput(f"the MCP server is gone: {_why(e)}", error=True)

    definition = ToolDef(server.prefix + name, listed.description or "", dict(listed.input_schema))
    return Tool(definition, call)


async def _hold(server: McpServer, errlog: TextIO, ready: asyncio.Future[tuple[Client, list[Any]]],
                stop: asyncio.Event) -> None:
    """Open the connection, hand over the client and its tools, keep it until `stop`, close it: all in this one
    task, so that a transport that fails mid-run (an HTTP server gone) ends this task and not the agent's."""
    mcp = _import_mcp()
    try:
        async with mcp.Client(_transport(server, errlog), cache=None) as client:
            ready.set_result((client, await _listed(client)))
            await stop.wait()
    except Exception as e:  # noqa: BLE001 - before `ready`: the start's failure; after it: the calls say so
        if not ready.done():
            ready.set_exception(e)


@asynccontextmanager
async def mcp_tools(server: McpServer) -> AsyncIterator[list[Tool]]:
    """Open `server`, yield its tools for an `Agent`, close it (a stdio server's process ended) on exit. One
    connection serves any number of trajectories in turn."""
    _import_mcp()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        errlog = cast(TextIO, log)
        ready: asyncio.Future[tuple[Client, list[Any]]] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        holder = asyncio.create_task(_hold(server, errlog, ready, stop), name="proctor-mcp")
        try:
            try:
                async with asyncio.timeout(server.start_timeout_s):
                    client, listed = await asyncio.shield(ready)
            except TimeoutError:
                raise McpServerError(f"MCP server {server.label}: no tool list within {server.start_timeout_s:g}s"
                                     f"{_tail(errlog)}") from None
            except McpServerError as e:
                raise McpServerError(f"MCP server {server.label}: {e}") from None
            except Exception as e:  # noqa: BLE001 - whatever the SDK raises when a server fails to start
                raise McpServerError(f"MCP server {server.label}: did not start: {_why(e)}{_tail(errlog)}") from None
            yield [_tool(client, server, t) for t in listed]
        finally:
            stop.set()
            if not ready.done():
                holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)


__all__ = ["McpServer", "McpServerError", "mcp_tools", "output_of"]
