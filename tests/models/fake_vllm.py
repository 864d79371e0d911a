"""A stand-in for `python -m vllm.entrypoints.openai.api_server` (tests/models/test_vllm_engine.py).

It takes vLLM's arguments, serves proctor's local test server (scripted answers) on `--port` with vLLM's
`/health` and `/version`, and starts a child process as vLLM starts its engine core, so a test can see that
stopping the engine leaves neither behind. FAKE_VLLM_MODE: `serve` (default), `fail` (print and exit 3
while starting), `hang` (never answer); FAKE_VLLM_CONFIG: the test server's settings (JSON); FAKE_VLLM_CHILD_PIDFILE: where to
write the child's pid. FAKE_VLLM_SETSID=1: the child leaves the process group (`setsid`);
FAKE_VLLM_IGNORE_TERM=1: the server and its child ignore SIGTERM; FAKE_VLLM_LONG_LINE=N: print one line of
N characters before anything else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-m")
    ap.add_argument("--port", type=int, required=True)
    args, rest = ap.parse_known_args()
    ignore_term = os.environ.get("FAKE_VLLM_IGNORE_TERM") == "1"
    if ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child
    if os.environ.get("FAKE_VLLM_LONG_LINE"):
        sys.stdout.write("x" * int(os.environ["FAKE_VLLM_LONG_LINE"]) + "\n")
    print("fake vllm starting with", " ".join(rest), flush=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=os.environ.get("FAKE_VLLM_SETSID") == "1")
    if os.environ.get("FAKE_VLLM_CHILD_PIDFILE"):
        with open(os.environ["FAKE_VLLM_CHILD_PIDFILE"], "w") as f:
            f.write(str(child.pid))
    mode = os.environ.get("FAKE_VLLM_MODE", "serve")
    if mode == "fail":
        print("ValueError: head size 16 is not supported by the CPU attention backend", flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(600)
    import uvicorn
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from proctor.testing.server import ServerConfig, build_app

    app = build_app(ServerConfig.from_dict(json.loads(os.environ.get("FAKE_VLLM_CONFIG", "{}"))))

    async def health(_: object) -> JSONResponse:
        return JSONResponse({})

    async def version(_: object) -> JSONResponse:
        return JSONResponse({"version": "0.0.fake"})

    app.router.routes[:0] = [Route("/health", health), Route("/version", version)]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off"))
    asyncio.run(server.serve())


if __name__ == "__main__":
    main()
