"""Local stand-ins for model servers, shipped for tests and benchmarks (like httpx.MockTransport).

`serve()` starts a real HTTP server process on 127.0.0.1 speaking the OpenAI and Anthropic APIs, with
configurable latency and fault injection; see `proctor.testing.server`. Needs starlette, uvicorn and
httpx (its client helpers: `stats`, `configure`, `reset`), all in the `dev` extra.
"""

from .server import FAULT_KINDS, LocalServer, ServerConfig, serve

__all__ = ["FAULT_KINDS", "LocalServer", "ServerConfig", "serve"]
