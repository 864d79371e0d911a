"""`anthropic:` against a real server process speaking the Messages API."""

from __future__ import annotations

import logging

import pytest

from proctor.models import Capability, GenerateRequest, GenerationSettings, Message, get_model
from proctor.models.anthropic import AnthropicModel
from proctor.testing import LocalServer
from proctor.util.errors import CapabilityError

pytest.importorskip("uvicorn")

SECRET = "sk-ant-SECRET-0123456789"
CONVERSATION = (
    Message("system", "Answer with a letter."),
    Message("user", "Pick one:\n(A) x\n(B) y"),
)


@pytest.fixture
def server(srv: LocalServer) -> LocalServer:
    srv.configure(api_key=SECRET, fault_rate=0.0, max_faults=None, reasoning=None, poison=None)
    return srv


def model(server: LocalServer, **kw: object) -> AnthropicModel:
    opts: dict[str, object] = {"base_url": server.url, "api_key": SECRET, "backoff_base": 0.01, "timeout": 5.0}
    return AnthropicModel("claude-test", **(opts | kw))  # type: ignore[arg-type]


async def test_messages_map_system_and_keep_thinking_and_usage(server: LocalServer) -> None:
    server.configure(reasoning="Letters only.")
    m = get_model("anthropic:claude-test", base_url=server.url, api_key=SECRET)
    [g] = await m.generate([GenerateRequest(CONVERSATION, GenerationSettings(temperature=0.2, top_p=0.8,
                                                                             max_tokens=32, stop=("END",), seed=1))])
    assert g.error is None
    assert (g.text, g.reasoning, g.finish_reason) == ("The answer is (A)", "Letters only.", "end_turn")
    assert g.input_tokens == sum(len(m.content.split()) for m in CONVERSATION) and g.output_tokens == 4
    body = server.stats()["last_body"]
    assert body["system"] == "Answer with a letter."
    assert body["messages"] == [{"role": "user", "content": "Pick one:\n(A) x\n(B) y"}]
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["stop_sequences"]) == (32, 0.2, 0.8, ["END"])
    assert "seed" not in body


async def test_default_max_tokens_is_sent(server: LocalServer) -> None:
    [g] = await model(server).generate([GenerateRequest(CONVERSATION, GenerationSettings(max_tokens=None))])
    assert g.error is None and server.stats()["last_body"]["max_tokens"] == 4096


def test_no_temperature_given_sends_none(server: LocalServer) -> None:
    """GenerationSpec's temperature None (an imported run that recorded none) is left to the API's default."""
    m = model(server)
    assert "temperature" not in m.body(GenerateRequest(CONVERSATION, GenerationSettings(temperature=None)))
    assert m.body(GenerateRequest(CONVERSATION))["temperature"] == 0.0


@pytest.mark.parametrize("kind", ["429", "500", "garbage", "hang"])
async def test_retries_and_error_records(server: LocalServer, kind: str) -> None:
    server.configure(fault_rate=1.0, faults=[kind], max_faults=1, retry_after=0.01, hang_s=5.0)
    m = model(server, timeout=0.3)
    [g] = await m.generate([GenerateRequest(CONVERSATION)])
    assert g.error is None and m.stats["retries"] == 1
    server.configure(poison="POISON", fault_rate=0.0)
    out = await model(server, max_retries=1).generate(
        [GenerateRequest((Message("user", "POISON"),)), GenerateRequest(CONVERSATION)])
    assert out[0].error is not None and "HTTP 500" in out[0].error
    assert out[1].error is None


async def test_key_is_required_sent_and_never_shown(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    m = AnthropicModel("claude-test", base_url=server.url)
    [g] = await m.generate([GenerateRequest(CONVERSATION)])
    assert g.error is None and server.stats()["authorized"] == 1
    [bad] = await model(server, api_key="wrong").generate([GenerateRequest(CONVERSATION)])
    assert bad.error is not None and "HTTP 401" in bad.error
    for shown in (caplog.text, str(m.describe()), repr(m)):
        assert SECRET not in shown


async def test_no_loglikelihood_capability(server: LocalServer) -> None:
    m = model(server)
    assert Capability.LOGLIKELIHOOD not in m.capabilities
    with pytest.raises(CapabilityError, match="cannot loglikelihood"):
        await m.probe({Capability.LOGLIKELIHOOD})
    assert server.stats()["requests"] == 0
