"""An MCP server written with the reference SDK (the `mcp` package's `MCPServer`, mcp 1.x's FastMCP), for
tests/scoring/test_mcp_tools.py: `python mcp_server.py stdio`, or `python mcp_server.py http PORT` (streamable HTTP on
127.0.0.1:PORT/mcp). Its tools answer, fail, hang, flood and die on request."""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("proctor-test", log_level="ERROR")


@server.tool()
def add(a: int, b: int = 0) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def fail(message: str) -> str:
    """Fail with the message (isError: true)."""
    raise ToolError(message)


@server.tool()
def hang(seconds: float) -> str:
    """Sleep that long."""
    time.sleep(seconds)
    return "woke"


@server.tool()
def flood(size: int) -> str:
    """Return `size` bytes of text."""
    return "x" * size


@server.tool()
def die() -> str:
    """End the server's process at once."""
    os._exit(3)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
