"""Items 1, 7 and 10 of issue 13 end to end: a real run against a hostile server on 127.0.0.1.

A malformed 200 reply is an error record (never cached: the next run asks again), an oversized body is
refused at the cap, and a key in the base URL is sent as the credential and appears nowhere on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import hostile_server

from proctor.cli import main
from proctor.models._http import HTTPBackend, RequestFailed, RetryPolicy

ITEM = {"identifier": "t.{i}", "modality": "choiceof3", "prompt": "Pick {i}.", "response": "B",
        "choices": {"A": "one", "B": "two", "C": "three"}}
GOOD = {"choices": [{"message": {"content": "The answer is B"}, "finish_reason": "stop"}]}


def _data(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({k: v.format(i=i) if isinstance(v, str) else v for k, v in ITEM.items()})
                            + "\n" for i in range(n)))
    return path


def _run(tmp_path: Path, base_url: str, *extra: str) -> int:
    return main(["run", str(_data(tmp_path)), "--model", "openai:m", "--base-url", base_url, "-o",
                 str(tmp_path / "run"), "--store", str(tmp_path / "store.sqlite"), "--no-progress",
                 "--max-retries", "0", *extra])


def _samples(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("body", [
    {"choices": [{"message": {"content": 5}}]},
    {"choices": [{"message": "B"}]},
    {"choices": [{"message": {"content": "B"}}], "usage": "12"},
    {"choices": [{"message": {"content": "B"}, "finish_reason": 7}]},
    {"choices": [{"message": {"content": "B\ud800"}}]},
])
def test_malformed_reply_is_an_error_record_not_cached(tmp_path: Path, body: object,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with hostile_server() as srv:
        srv.body = json.dumps(body).encode()
        _run(tmp_path, srv.base_url)
        samples = _samples(tmp_path)
        assert len(samples) == 3 and all(s["outcome"] == "error" for s in samples)
        assert all("invalid reply" in str(s["error"]) for s in samples)
        asked = srv.requests
        srv.body = json.dumps(GOOD).encode()  # the server recovers: the re-run asks again (nothing cached)
        assert _run(tmp_path, srv.base_url) == 0
        assert srv.requests == asked + 3
        latest = {s["sample_id"]: s for s in _samples(tmp_path)}
        assert all(s["outcome"] == "correct" for s in latest.values())


def test_content_parts_reply_is_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with hostile_server() as srv:
        srv.body = json.dumps({"choices": [{"message": {"content": [{"type": "text", "text": "The answer is B"}]}}]}).encode()
        assert _run(tmp_path, srv.base_url) == 0
        assert all(s["outcome"] == "correct" for s in _samples(tmp_path))


@pytest.mark.parametrize("declared", [None, 10**12])
async def test_body_over_the_cap_is_refused(declared: int | None) -> None:
    with hostile_server() as srv:
        srv.body = json.dumps({"choices": [{"message": {"content": "x" * 5000}}]}).encode()
        srv.declared_length = declared
        http = HTTPBackend([srv.base_url], {}, concurrency=1, policy=RetryPolicy(max_retries=0, timeout=5),
                           max_body=1000)
        with pytest.raises(RequestFailed, match="larger than 1000 bytes") as e:
            await http.post("/chat/completions", {})
        assert not e.value.retryable
        await http.aclose()


def test_key_in_base_url_is_sent_and_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with hostile_server() as srv:
        srv.body = json.dumps(GOOD).encode()
        url = srv.base_url.replace("http://", "http://user:SECRETKEY42@") + "?api_key=SECRETKEY42"
        assert _run(tmp_path, url) == 0
        assert srv.seen_headers[0]["authorization"] == "Bearer SECRETKEY42"
        srv.status, srv.body = 500, b'{"error": "bad key SECRETKEY42 for http://u:SECRETKEY42@h"}'
        _run(tmp_path, url, "--epochs", "2")  # errors carry the server's message, redacted
    for f in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert b"SECRETKEY42" not in f.read_bytes(), f


def test_a_key_only_in_the_base_urls_query_is_masked_when_the_server_echoes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`?key=…` (Gemini, Azure's `api-key`) is a credential too: a server that echoes its request line in an
    error body must not put it into the error records."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with hostile_server() as srv:
        srv.status, srv.body = 500, b'{"error": "no route POST /v1/chat/completions?key=QUERYSECRET77"}'
        _run(tmp_path, srv.base_url + "?key=QUERYSECRET77")
    errors = [s["error"] for s in _samples(tmp_path)]
    assert errors and all(isinstance(e, str) and "HTTP 500" in e for e in errors)
    for f in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert b"QUERYSECRET77" not in f.read_bytes(), f


def test_command_line_key_is_redacted_in_manifest_and_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with hostile_server() as srv:
        srv.body = json.dumps(GOOD).encode()
        url = srv.base_url.replace("http://", "http://u:SECRETKEY42@")
        monkeypatch.setattr("sys.argv", ["proctor", "run", "--base-url", url])
        with pytest.raises(Exception, match="another key"):  # two different keys: refused, not guessed
            from proctor.models.openai import OpenAIModel
            OpenAIModel("m", base_url=url, api_key="other")
        monkeypatch.delenv("OPENAI_API_KEY")
        assert _run(tmp_path, url) == 0
    assert b"SECRETKEY42" not in (tmp_path / "run" / "manifest.json").read_bytes()
    with sqlite3.connect(tmp_path / "store.sqlite") as c:
        assert "SECRETKEY42" not in str(c.execute("SELECT manifest FROM runs").fetchall())


@pytest.mark.parametrize("name", ["apiToken", "X-Amz-Signature", "jwt"])
def test_any_query_value_of_the_base_url_is_masked_in_manifest_and_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Issue 32 #10: `?apiToken=`, `?X-Amz-Signature=`, `?jwt=`… never land in clear (command, base_urls, store)."""
    import sqlite3

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with hostile_server() as srv:
        srv.body = json.dumps(GOOD).encode()
        url = f"{srv.base_url}?{name}=QUERYSECRET55"
        monkeypatch.setattr("sys.argv", ["proctor", "run", "--base-url", url])
        assert _run(tmp_path, url) == 0
    for f in [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".sqlite"]:
        assert b"QUERYSECRET55" not in f.read_bytes(), f
    with sqlite3.connect(tmp_path / "store.sqlite") as c:
        assert "QUERYSECRET55" not in str(c.execute("SELECT manifest FROM runs").fetchall())


@pytest.mark.parametrize("framing", ["chunked", "close"])
async def test_body_cap_holds_for_chunked_and_close_delimited_bodies(framing: str) -> None:
    import asyncio

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        if framing == "chunked":
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in range(50):
                writer.write(b"64\r\n" + b"x" * 100 + b"\r\n")
            writer.write(b"0\r\n\r\n")
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        http = HTTPBackend([f"http://127.0.0.1:{port}/v1"], {}, concurrency=1,
                           policy=RetryPolicy(max_retries=0, timeout=5), max_body=1000)
        with pytest.raises(RequestFailed, match="larger than 1000 bytes"):
            await http.post("/chat/completions", {})
        await http.aclose()


async def test_anthropic_key_in_user_info_is_sent_as_x_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor.core.model import GenerateRequest, Message
    from proctor.models.anthropic import AnthropicModel

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with hostile_server() as srv:
        srv.body = json.dumps({"content": [{"type": "text", "text": "B"}], "stop_reason": "end_turn"}).encode()
        model = AnthropicModel("claude", base_url=f"http://u:SECRETKEY42@127.0.0.1:{srv.port}", max_retries=0)
        assert "SECRETKEY42" not in repr(model) + json.dumps(model.describe())
        [g] = await model.generate([GenerateRequest((Message("user", "hi"),))])
        await model.aclose()
    assert g.text == "B" and srv.seen_headers[0]["x-api-key"] == "SECRETKEY42"
