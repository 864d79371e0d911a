"""Local stand-ins for model servers, shipped for tests and benchmarks (like httpx.MockTransport).

`serve()` starts a real HTTP server process on 127.0.0.1 speaking the OpenAI and Anthropic APIs, with
configurable latency and fault injection; see `proctor.testing.server`. Needs starlette, uvicorn and
httpx (its client helpers: `stats`, `configure`, `reset`): the `testing` extra, which `make demo` installs.
"""

try:
    from .server import FAULT_KINDS, LocalServer, ServerConfig, serve
except ModuleNotFoundError as e:  # the extra is missing: say which and how to get it, not where it failed
    raise ModuleNotFoundError(f"proctor.testing needs {e.name}: pip install 'proctor-eval[testing]'",
                              name=e.name) from None

__all__ = ["FAULT_KINDS", "LocalServer", "ServerConfig", "serve"]
