"""`proctor run` with reasoning settings: on the wire, in the manifest and the cache key; refused when the
backend cannot send them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor import read_run
from proctor.testing import LocalServer

from .conftest import AIME, chat_requests

QWEN3_FLAGS = ("--temperature", "0.6", "--top-p", "0.95", "--top-k", "20", "--min-p", "0", "--max-tokens", "32768",
               "--enable-thinking", "--system", "Reason step by step.", "--extra-body", '{"repetition_penalty": 1.05}')


def test_qwen3_settings_reach_the_server_manifest_and_cache_key(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    common = ("run", "aime-2025", "--data-file", AIME, "--model", "openai:qwen3", "--base-url", server.base_url,
              "--limit", "2", "--store", tmp_path / "s.sqlite", "--no-progress")
    r = cli(*common, *QWEN3_FLAGS, "-o", tmp_path / "a")
    assert r.code == 0, r.err
    body = server.stats()["last_body"]
    assert (body["top_k"], body["min_p"], body["max_tokens"], body["repetition_penalty"]) == (20, 0.0, 32768, 1.05)
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert body["messages"][0] == {"role": "system", "content": "Reason step by step."}
    generation = read_run(tmp_path / "a").manifest.generation
    assert "top_k" in str(generation) and "enable_thinking" in str(generation)
    sent = chat_requests(server)
    r = cli(*common, *QWEN3_FLAGS, "--disable-thinking", "-o", tmp_path / "b")  # the last flag wins
    assert r.code == 0, r.err
    assert chat_requests(server) == sent + 2  # a different setting: not served from the cache
    assert server.stats()["last_body"]["chat_template_kwargs"] == {"enable_thinking": False}


def test_settings_a_backend_cannot_send_are_refused(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    common = ("run", "aime-2025", "--data-file", AIME, "--base-url", server.base_url, "--limit", "1",
              "--store", tmp_path / "s.sqlite", "--no-progress", "-o", tmp_path / "run")
    r = cli(*common, "--model", "openai:m", "--thinking-budget", "2048")
    assert r.code == 2 and "cannot send --thinking-budget" in r.err
    r = cli(*common, "--model", "anthropic:m", "--thinking-budget", "4096", "--max-tokens", "2048")
    assert r.code == 2 and "below --max-tokens" in r.err
    r = cli(*common, "--model", "openai:m", "--extra-body", "[1]")
    assert r.code == 2 and "--extra-body must be a JSON object" in r.err
    assert chat_requests(server) == 0 and not (tmp_path / "run").exists()
