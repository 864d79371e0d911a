"""`openai:` against real server processes on 127.0.0.1: generation, spreading, retries, log-probs."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.models import (
    Capability,
    GenerateRequest,
    GenerationSettings,
    LoglikelihoodRequest,
    Message,
    get_model,
)
from proctor.models.openai import OpenAIModel
from proctor.models.scripted import ScriptedModel
from proctor.testing import LocalServer, serve
from proctor.util.errors import CapabilityError

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

QUESTION = "Which is larger?\n(A) one\n(B) two\n(C) three"


def ask(text: str = QUESTION, **settings: object) -> GenerateRequest:
    return GenerateRequest((Message("user", text),), GenerationSettings(**settings))  # type: ignore[arg-type]


@pytest.fixture
def server(srv: LocalServer) -> LocalServer:
    srv.configure(responder="first", latency=0.0, fault_rate=0.0, max_faults=None, reasoning=None, api_key=None,
                  poison=None, chat_only=False, faults=["429", "500", "hang", "garbage"])
    return srv


def fast(server: LocalServer, **kw: object) -> OpenAIModel:
    """A model with tiny backoffs so retry tests stay quick."""
    opts: dict[str, object] = {"base_url": server.base_url, "backoff_base": 0.01, "timeout": 5.0, "api_key": "k"}
    return OpenAIModel("test-model", **(opts | kw))  # type: ignore[arg-type]


async def test_chat_generation_keeps_text_usage_reasoning_and_settings(server: LocalServer) -> None:
    server.configure(reasoning="Two is larger than one.")
    model = get_model("openai:test-model", base_url=server.base_url, api_key="k")
    [g] = await model.generate([ask(temperature=0.7, top_p=0.9, max_tokens=64, stop=("\n\n",), seed=3)])
    assert g.error is None
    assert g.text == "The answer is (A)"
    assert g.finish_reason == "stop"
    assert g.reasoning == "Two is larger than one."
    assert g.input_tokens == len(QUESTION.split()) and g.output_tokens == 4
    assert g.latency_s is not None and g.latency_s > 0
    body = server.stats()["last_body"]
    assert body["messages"] == [{"role": "user", "content": QUESTION}]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["stop"], body["seed"]) == (
        0.7, 0.9, 64, ["\n\n"], 3)


async def test_text_completions_mode(server: LocalServer) -> None:
    [g] = await fast(server, chat=False).generate([ask()])
    assert g.error is None and g.text == "The answer is (A)"
    assert server.stats()["by_path"] == {"/v1/completions": 1}


async def test_a_completion_request_goes_to_text_completions_as_it_is(server: LocalServer) -> None:
    """`--format completion` (a spec benchmark's plain-text prompt): /v1/completions with the text unchanged,
    even from a chat model."""
    text = "Question: 1 + 1?\nAnswer:"
    [g] = await fast(server).generate([GenerateRequest((Message("user", text),), completion=True)])
    assert g.error is None
    assert server.stats()["by_path"] == {"/v1/completions": 1}
    assert server.stats()["last_body"]["prompt"] == text


SYSTEM_AND_USER = (Message("system", "Be brief."), Message("user", QUESTION))


@pytest.mark.parametrize(("chat", "completion", "path"), [
    (True, False, "/v1/chat/completions"), (True, True, "/v1/completions"), (False, False, "/v1/completions"),
])
async def test_sent_prompt_is_what_the_server_receives(server: LocalServer, chat: bool, completion: bool,
                                                       path: str) -> None:
    """#47: `sent_prompt` (what a run records) is the body's `prompt` or `messages`, byte for byte, for every
    way a request can go out: a chat, a completion request, any request to a `chat=False` endpoint."""
    model = fast(server, chat=chat)
    request = GenerateRequest(SYSTEM_AND_USER, GenerationSettings(system="You are careful."), completion=completion)
    [g] = await model.generate([request])
    assert g.error is None and server.stats()["by_path"] == {path: 1}
    body = server.stats()["last_body"]
    sent = model.sent_prompt(request)
    assert sent == (body["messages"] if path.endswith("chat/completions") else body["prompt"])
    assert isinstance(sent, str) is (path == "/v1/completions")


async def test_several_base_urls_share_the_load() -> None:
    with serve(latency=0.02) as a, serve(latency=0.02) as b:
        model = OpenAIModel("m", base_url=[a.base_url, b.base_url], concurrency=8, api_key="k")
        out = await model.generate([ask(f"Q{i}") for i in range(40)])
        assert all(g.error is None for g in out)
        counts = [a.stats()["requests"], b.stats()["requests"]]
    assert sum(counts) == 40
    assert min(counts) >= 15, counts


async def test_concurrency_bound_is_respected(server: LocalServer) -> None:
    server.configure(latency=0.05)
    out = await fast(server, concurrency=5).generate([ask(f"Q{i}") for i in range(30)])
    assert all(g.error is None for g in out)
    assert server.stats()["max_in_flight"] == 5


async def test_retry_after_is_honoured_on_429(server: LocalServer) -> None:
    server.configure(fault_rate=1.0, faults=["429"], max_faults=1, retry_after=0.4)
    model = fast(server)
    t0 = time.perf_counter()
    [g] = await model.generate([ask()])
    assert g.error is None and g.text == "The answer is (A)"
    assert time.perf_counter() - t0 >= 0.4
    assert model.stats["retries"] == 1
    assert server.stats()["requests"] == 2


@pytest.mark.parametrize("kind", ["500", "garbage", "hang"])
async def test_retries_recover_from_faults(server: LocalServer, kind: str) -> None:
    server.configure(fault_rate=1.0, faults=[kind], max_faults=2, hang_s=5.0)
    model = fast(server, timeout=0.3)
    [g] = await model.generate([ask()])
    assert g.error is None and g.text == "The answer is (A)"
    assert model.stats == {"requests": 1, "attempts": 3, "retries": 2, "errors": 0}
    assert server.stats()["faults"] == {kind: 2}


async def test_exhausted_retries_record_an_error_and_keep_the_batch(server: LocalServer) -> None:
    server.configure(poison="POISON")
    model = fast(server, max_retries=2)
    out = await model.generate([ask("Q1"), ask("POISON question"), ask("Q3")])
    assert [g.error is None for g in out] == [True, False, True]
    assert out[1].error is not None and "HTTP 500" in out[1].error and out[1].text == ""
    assert out[0].text == out[2].text == "The answer is (A)"
    assert server.stats()["requests"] == 2 + 3  # the poisoned one tried 1 + 2 retries


async def test_client_errors_are_not_retried(server: LocalServer) -> None:
    server.configure(api_key="right")
    model = fast(server, api_key="wrong")
    [g] = await model.generate([ask()])
    assert g.error is not None and "HTTP 401" in g.error
    assert model.stats["attempts"] == 1


async def test_api_key_is_sent_but_never_logged_or_described(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-proctor-SECRET-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server.configure(api_key=secret, fault_rate=1.0, faults=["429", "500"], max_faults=2, retry_after=0.01)
    caplog.set_level(logging.DEBUG)
    model = OpenAIModel("m", base_url=server.base_url, backoff_base=0.01)
    [g] = await model.generate([ask()])
    assert g.error is None
    assert server.stats()["authorized"] == 3
    assert "retry" in caplog.text  # the retries were logged ...
    for shown in (caplog.text, str(model.describe()), repr(model), repr(model.http)):
        assert secret not in shown  # ... without the key


async def test_probe_refuses_a_chat_only_server_before_any_scoring(server: LocalServer) -> None:
    server.configure(chat_only=True)
    model = fast(server)
    await model.probe({Capability.GENERATE})  # generation is fine
    with pytest.raises(CapabilityError, match="Chat-only endpoints do not return prompt log-probs"):
        await model.probe({Capability.LOGLIKELIHOOD})
    # one completions probe, no retries, no scoring (and the GET /v1/models that learns the context window)
    assert server.stats()["by_path"].get("/v1/completions") == 1 and server.stats()["requests"] == 2


async def test_loglikelihood_matches_the_scripted_model_exactly(server: LocalServer) -> None:
    reqs = [
        LoglikelihoodRequest("The answer is", " (B)"),
        LoglikelihoodRequest("Question: what is 2 + 2?\nAnswer:", " 4"),
        LoglikelihoodRequest("It was glued", "word"),  # the boundary falls inside a token: it counts as the continuation's
        LoglikelihoodRequest("", "Nothing before"),
    ]
    model = fast(server)
    await model.probe({Capability.LOGLIKELIHOOD})
    got = await model.loglikelihood(reqs)
    want = await ScriptedModel("first").loglikelihood(reqs)
    assert [(g.logprob, g.n_tokens, g.is_greedy, g.error is None) for g in got] == [
        (w.logprob, w.n_tokens, w.is_greedy, w.error is None) for w in want]
    assert [g.n_tokens for g in got] == [1, 1, 1, 0]
    assert got[3].error is not None  # its first token has nothing to be predicted from


@pytest.fixture(scope="module")
def hf_server(tiny_model_dir: Path) -> Iterator[LocalServer]:
    with serve(model_dir=str(tiny_model_dir)) as s:
        yield s


def reference_logprobs(model_dir: Path, reqs: list[LoglikelihoodRequest]) -> list[tuple[float, int, bool]]:
    """One full forward pass over context + continuation; continuation = tokens beyond the context's."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    out = []
    for r in reqs:
        n_ctx = len(tok(r.context)["input_ids"])
        ids = tok(r.context + r.continuation)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(lm(torch.tensor([ids])).logits[0].double(), dim=-1)
        rows = range(n_ctx, len(ids))
        total = sum(float(logp[i - 1, ids[i]]) for i in rows)
        greedy = all(int(logp[i - 1].argmax()) == ids[i] for i in rows)
        out.append((total, len(rows), greedy))
    return out


@pytest.mark.parametrize("echo_max_tokens", [0, 1])
async def test_completions_logprobs_equal_a_direct_forward_pass(
    hf_server: LocalServer, tiny_model_dir: Path, echo_max_tokens: int
) -> None:
    reqs = [
        LoglikelihoodRequest("The quick brown fox", " jumps over the lazy dog."),
        LoglikelihoodRequest("Question: physics. The correct answer is", " (A)"),
        LoglikelihoodRequest("The answer is", " True"),
        LoglikelihoodRequest("0 1 2 3", " 4 5 6 7 8 9 10 100 999"),
    ]
    model = OpenAIModel("tiny", base_url=hf_server.base_url, api_key="k", echo_max_tokens=echo_max_tokens)
    await model.probe({Capability.LOGLIKELIHOOD})
    got = await model.loglikelihood(reqs)
    want = reference_logprobs(tiny_model_dir, reqs)
    for g, (lp, n, greedy) in zip(got, want, strict=True):
        assert g.error is None
        assert g.n_tokens == n
        assert g.logprob == pytest.approx(lp, abs=1e-4)
        assert g.is_greedy == greedy


BOUNDARY_CASES = [
    LoglikelihoodRequest("Question: physics. The correct answer is", " (A)"),
    LoglikelihoodRequest("The answer is ", "B"),  # trailing space: it merges with the continuation
    LoglikelihoodRequest("Answer:\n", "Paris\n\n"),
    LoglikelihoodRequest("Ünïcödé ✓ — ", "naïve café 東京"),
    LoglikelihoodRequest("", "Nothing before but BOS"),
]


@pytest.mark.parametrize("route", ["context-echo", "token-ids"])
async def test_bos_shifted_offsets_do_not_move_the_boundary(
    hf_server: LocalServer, tiny_model_dir: Path, route: str
) -> None:
    """Issue 11: vLLM's text_offset counts BOS's `<s>`; the split is by tokens, so it equals `hf:` anyway."""
    from proctor.models.hf import HFModel

    hf_server.configure(vllm_offsets=True)
    try:
        extra = {"tokenizer": str(tiny_model_dir)} if route == "token-ids" else {}
        model = OpenAIModel("tiny", base_url=hf_server.base_url, api_key="k", **extra)  # type: ignore[arg-type]
        await model.probe({Capability.LOGLIKELIHOOD})
        got = await model.loglikelihood(BOUNDARY_CASES)
        want = await HFModel(str(tiny_model_dir), dtype="float32").loglikelihood(BOUNDARY_CASES)
    finally:
        hf_server.configure(vllm_offsets=False)
    for g, w in zip(got, want, strict=True):
        assert g.error is None and w.error is None
        assert (g.n_tokens, g.is_greedy) == (w.n_tokens, w.is_greedy)
        assert g.logprob == pytest.approx(w.logprob, abs=1e-4)
    assert got[1].n_tokens >= 1 and got[4].n_tokens >= 4


async def test_context_echo_is_requested_once_per_distinct_context(hf_server: LocalServer) -> None:
    model = OpenAIModel("tiny", base_url=hf_server.base_url, api_key="k")
    before = hf_server.stats()["by_path"].get("/v1/completions", 0)
    out = await model.loglikelihood([LoglikelihoodRequest("Pick one:", f" {c}") for c in "ABCD"])
    assert all(o.error is None for o in out)
    assert hf_server.stats()["by_path"]["/v1/completions"] - before == 5  # 4 choices + their shared context


async def test_probe_refuses_a_tokenizer_that_does_not_match_the_server(hf_server: LocalServer, tmp_path: Path) -> None:
    from proctor.models.tiny import build_tiny_model

    no_bos = build_tiny_model(tmp_path / "no-bos", bos=False)  # the served tokenizer prepends BOS: one token more
    model = OpenAIModel("tiny", base_url=hf_server.base_url, api_key="k", tokenizer=str(no_bos))
    with pytest.raises(CapabilityError, match="does not tokenize like the served model"):
        await model.probe({Capability.LOGLIKELIHOOD})


def test_an_unloadable_tokenizer_is_a_clear_error(tmp_path: Path) -> None:
    from proctor.util.errors import ProctorError

    with pytest.raises(ProctorError, match="cannot load the tokenizer"):
        OpenAIModel("tiny", base_url="http://127.0.0.1:9/v1", tokenizer=str(tmp_path / "missing"))


async def test_a_fifth_of_requests_failing_loses_none(server: LocalServer) -> None:
    """Issue 5's fault run: 429s, 500s, hangs past the timeout and garbage bodies on 20% of requests."""
    server.configure(fault_rate=0.2, seed=5, retry_after=0.02, hang_s=5.0)
    model = fast(server, concurrency=16, timeout=0.5, max_retries=6)
    reqs = [ask(f"{QUESTION}\nvariant {i}") for i in range(150)]
    out = await model.generate(reqs)
    stats = server.stats()
    assert len(out) == len(reqs)
    assert all(g.error is None and g.text == "The answer is (A)" for g in out)  # every sample answered
    assert set(stats["faults"]) == {"429", "500", "hang", "garbage"}
    injected = sum(stats["faults"].values())
    assert 15 <= injected <= 60
    assert model.stats["retries"] == injected  # every fault cost exactly one retry, nothing more
    assert stats["answered"] == len(reqs)


def test_backoff_policy_and_retry_after_parsing() -> None:
    import random

    from proctor.models._http import EndpointPool, RetryPolicy, parse_retry_after

    policy = RetryPolicy(backoff_base=0.5, backoff_max=4.0, retry_after_max=60.0)
    rng = random.Random(0)
    waits = [policy.wait(k, None, rng) for k in range(1, 9) for _ in range(50)]
    assert all(0 <= w <= 4.0 for w in waits) and max(waits) > 2.0  # full jitter, capped
    assert all(policy.wait(1, 7.5, rng) >= 7.5 for _ in range(20))  # never shorter than Retry-After
    assert policy.wait(1, 1e6, rng) == 60.0
    assert parse_retry_after("3") == 3.0 and parse_retry_after("0.25") == 0.25
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    pool = EndpointPool(["a", "b", "c"])
    picks = [pool.acquire() for _ in range(3)]
    assert sorted(picks) == [0, 1, 2]  # least busy first
    pool.release(1)
    assert pool.acquire() == 1


def test_no_temperature_given_sends_none() -> None:
    """GenerationSpec's temperature None (none recorded) is left to the server's default; 0 is sent as 0."""
    from proctor.models.openai import sampling_body

    assert "temperature" not in sampling_body("m", ask(temperature=None).settings)
    assert sampling_body("m", ask().settings)["temperature"] == 0.0
