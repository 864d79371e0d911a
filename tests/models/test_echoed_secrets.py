"""A server that echoes its request (headers, path) never gets a secret into anything proctor writes or prints:
the candidate's key, the judge's key and a `;sess=TOKEN` path parameter of a base URL are masked in samples,
results, the store and the request cache, and on stderr."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from proctor.cli import main

DEMO = Path(__file__).parents[2] / "examples" / "items" / "demo.jsonl"
KEY, JUDGE_KEY, SESSION = "cand-key-7f3a9c21", "judge-key-5b8e0d44", "sessiontoken9931"


def _echo_app() -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        echo = f"you sent {request.headers.get('Authorization')} to {request.path_qs}. Answer: True"
        body = {"id": "x", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": echo}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}}
        return web.json_response(body)

    app = web.Application()
    app.router.add_route("POST", "/{tail:.*}", chat)
    return app


@pytest.fixture
def echo_url() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(_echo_app())
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.run_until_complete(runner.cleanup())
    loop.close()


def test_echoed_keys_and_url_secrets_are_masked_everywhere(echo_url: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_JUDGE_KEY", JUDGE_KEY)
    monkeypatch.setenv("PROCTOR_STORE", str(tmp_path / "store" / "store.sqlite"))
    out = tmp_path / "run"
    code = main(["run", str(DEMO), "--model", "openai:m", "--base-url", f"{echo_url}/v1;sess={SESSION}",
                 "--judge", "openai:j", "--judge-base-url", f"{echo_url}/judge/v1",
                 "--judge-api-key-env", "MY_JUDGE_KEY", "-o", str(out)])
    printed = capsys.readouterr()
    assert code in (0, 1), printed.err
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert samples and all("you sent" in s["raw_output"] for s in samples)  # the echo did reach the record
    written = [p.read_bytes() for p in [*out.rglob("*"), *(tmp_path / "store").rglob("*")] if p.is_file()]
    for secret in (KEY, JUDGE_KEY, SESSION):
        assert not any(secret.encode() in data for data in written), secret
        assert secret not in printed.out and secret not in printed.err
