"""The local test server itself: vLLM-shaped echo log-probs, seeded faults, counters, lifecycle."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from proctor.testing import LocalServer, ServerConfig, serve

pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with serve() as s:
        yield s


def post(srv: LocalServer, path: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(srv.base_url + path, json=body, timeout=10)


def test_completions_echo_has_vllm_shape(srv: LocalServer) -> None:
    srv.configure(fault_rate=0.0)
    prompt = "The answer is (B)"
    r = post(srv, "/completions", {"model": "m", "prompt": prompt, "echo": True, "logprobs": 1, "max_tokens": 0})
    choice = r.json()["choices"][0]
    lp = choice["logprobs"]
    assert choice["text"] == prompt
    assert lp["tokens"] == ["The", " answer", " is", " (B)"]
    assert lp["text_offset"] == [0, 3, 10, 13]
    assert lp["token_logprobs"][0] is None and all(x < 0 for x in lp["token_logprobs"][1:])
    assert lp["top_logprobs"][0] is None and all(len(t) == 1 for t in lp["top_logprobs"][1:])
    assert r.json()["usage"]["prompt_tokens"] == 4


def test_models_and_stats(srv: LocalServer) -> None:
    srv.configure()
    assert httpx.get(srv.base_url + "/models").json()["data"][0]["id"] == "proctor-test"
    post(srv, "/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
    stats = srv.stats()
    assert stats["requests"] == 2 and stats["answered"] == 2
    assert stats["by_path"] == {"/v1/models": 1, "/v1/chat/completions": 1}
    srv.reset()
    assert srv.stats()["requests"] == 0


def fault_pattern(srv: LocalServer, seed: int) -> list[int]:
    srv.configure(fault_rate=0.5, faults=["429", "500", "garbage"], seed=seed, retry_after=2.5)
    codes = []
    with httpx.Client(base_url=srv.base_url, timeout=10) as client:
        responses = [client.post("/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
                     for _ in range(30)]
    for r in responses:
        if r.status_code == 429:
            assert r.headers["retry-after"] == "2.5"
        garbage = r.status_code == 200 and not r.text.endswith("}")
        codes.append(-1 if garbage else r.status_code)
    return codes


def test_faults_follow_the_seed(srv: LocalServer) -> None:
    a, b, c = fault_pattern(srv, 1), fault_pattern(srv, 1), fault_pattern(srv, 2)
    assert a == b and a != c
    assert {429, 500, -1, 200} == set(a)
    assert sum(srv.stats()["faults"].values()) == sum(code != 200 for code in c)


def test_chat_only_and_config_validation(srv: LocalServer) -> None:
    srv.configure(chat_only=True)
    assert post(srv, "/completions", {"prompt": "x"}).status_code == 404
    with pytest.raises(ValueError, match="unknown server settings"):
        srv.configure(colour="blue")
    with pytest.raises(ValueError):
        ServerConfig(faults=("teapot",))


def test_server_process_is_killed_on_exit() -> None:
    with serve() as s:
        proc = s.proc
        assert proc.poll() is None
    assert proc.poll() is not None
    with pytest.raises(httpx.ConnectError):
        httpx.get(s.url + "/stats", timeout=2)


def test_stop_sequences_cut_the_answer_as_openai_and_vllm_do(srv: LocalServer) -> None:
    srv.configure(fault_rate=0.0, chat_only=False, responder="fixed=It is (A).\n\nQuestion: and more")
    done = post(srv, "/completions", {"model": "m", "prompt": "Q", "max_tokens": 50, "stop": ["Question:", "zzz"]})
    assert done.json()["choices"][0]["text"] == "It is (A).\n\n"
    assert done.json()["choices"][0]["finish_reason"] == "stop"
    chat = post(srv, "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "Q"}],
                                           "stop": "Question:"})
    assert chat.json()["choices"][0]["message"]["content"] == "It is (A).\n\n"
    free = post(srv, "/completions", {"model": "m", "prompt": "Q", "max_tokens": 50})
    assert free.json()["choices"][0]["text"] == "It is (A).\n\nQuestion: and more"
    srv.configure(responder="first")


def test_a_scripted_completion_is_whole_unless_truncate_cuts_it(srv: LocalServer) -> None:
    """The stand-in's scripted replies end with `stop` (a completion-format run is not 100% truncated);
    with `truncate` on, a reply longer than max_tokens words is cut with `length`."""
    srv.configure(fault_rate=0.0, chat_only=False, responder="fixed=The answer is (B).")
    whole = post(srv, "/completions", {"model": "m", "prompt": "Q", "max_tokens": 50})
    assert whole.json()["choices"][0]["finish_reason"] == "stop"
    srv.configure(truncate=True)
    cut = post(srv, "/completions", {"model": "m", "prompt": "Q", "max_tokens": 2})
    assert cut.json()["choices"][0] == {**cut.json()["choices"][0], "text": "The answer", "finish_reason": "length"}
    srv.configure(responder="first", truncate=False)


def test_scripted_tool_calls_turn_by_turn_then_text_or_forever(srv: LocalServer) -> None:
    script = [[{"name": "f", "arguments": {"x": 1}}], [{"name": "g", "arguments": "not json", "id": "k"}]]
    srv.configure(tool_replies=script, responder="fixed=done")
    convo: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    turns = []
    for _ in range(3):
        message = post(srv, "/chat/completions", {"model": "m", "messages": convo}).json()["choices"][0]["message"]
        turns.append(message)
        convo += [{"role": "assistant", "content": message["content"], "tool_calls": message.get("tool_calls", [])},
                  {"role": "tool", "content": "r", "tool_call_id": "x"}]
    assert turns[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert turns[1]["tool_calls"][0]["id"] == "k" and turns[1]["tool_calls"][0]["function"]["arguments"] == "not json"
    assert turns[2]["content"] == "done" and "tool_calls" not in turns[2]
    srv.configure(tool_replies=script[:1], tool_repeat=True)
    many = [{"role": "assistant", "content": None}] * 50
    again = post(srv, "/chat/completions", {"model": "m", "messages": many}).json()["choices"][0]
    assert again["finish_reason"] == "tool_calls"
    with pytest.raises(ValueError, match="tool_replies"):
        srv.configure(tool_replies=[{"name": "f"}])
    srv.configure(tool_replies=[], tool_repeat=False, responder="first")


def test_help_lists_every_responder_option_and_setting() -> None:
    """`python -m proctor.testing --help` names each scripted rule, option and ServerConfig setting (#51 item 6)."""
    import dataclasses
    import subprocess
    import sys

    from proctor.models.scripted import _RULES, RULE_OPTIONS, RULES
    from proctor.testing.server import SETTINGS, ServerConfig

    out = subprocess.run([sys.executable, "-m", "proctor.testing", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert {form.partition("=")[0] for form in RULES} == set(_RULES)
    for form in [*RULES, *RULE_OPTIONS, "fixed=TEXT", "echo", "tool_replies", "tool_repeat", "answer_with_result"]:
        assert f"  {form} " in out, form
    names = [f.name for f in dataclasses.fields(ServerConfig)]
    assert set(SETTINGS) == set(names)
    assert all(SETTINGS[n] and f"  {n} " in out for n in names)
