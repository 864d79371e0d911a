"""CachedModel: answers already given come from the store; only misses, and errors, reach the model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proctor.core.model import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    ModelBase,
)
from proctor.run.cache import CachedModel
from proctor.run.store import Store


class Recording(ModelBase):
    """Answers every prompt with its own text (an error for prompts containing 'fail'); records what it was asked."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})

    def __init__(self, url: str = "http://a") -> None:
        self.name = "rec:m"
        self.url = url
        self.asked: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"spec": self.name}  # never the URL: the same model behind another URL is the same

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        texts = [r.messages[-1].content for r in requests]
        self.asked += texts
        return [Generation(error="HTTP 500") if "fail" in t else Generation(text=t.upper()) for t in texts]

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.asked += [r.continuation for r in requests]
        return [Loglikelihood(logprob=-float(len(r.continuation)), n_tokens=1) for r in requests]


def _ask(*texts: str) -> list[GenerateRequest]:
    return [GenerateRequest((Message("user", t),)) for t in texts]


def test_a_second_ask_comes_from_the_store_and_errors_are_asked_again(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        inner = Recording()
        cached = CachedModel(inner, store)
        first = asyncio.run(cached.generate(_ask("a", "b", "fail")))
        assert [g.text for g in first] == ["A", "B", ""] and first[2].error == "HTTP 500"
        again = asyncio.run(cached.generate(_ask("b", "a", "fail", "c")))
        assert [g.text for g in again] == ["B", "A", "", "C"]
        assert inner.asked == ["a", "b", "fail", "fail", "c"]  # the error was not stored: asked again
        assert (cached.hits, cached.misses) == (2, 5)


def test_a_request_repeated_in_one_batch_is_asked_once(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        inner = Recording()
        out = asyncio.run(CachedModel(inner, store).generate(_ask("x", "y", "x")))
        assert [g.text for g in out] == ["X", "Y", "X"] and inner.asked == ["x", "y"]


def test_the_key_is_the_identity_and_the_request_not_the_url(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        asyncio.run(CachedModel(Recording("http://a"), store).generate(_ask("q")))
        elsewhere = Recording("http://b")
        asyncio.run(CachedModel(elsewhere, store).generate(_ask("q")))
        assert elsewhere.asked == []
        hotter = [GenerateRequest((Message("user", "q"),), GenerationSettings(temperature=0.7))]
        asyncio.run(CachedModel(elsewhere, store).generate(hotter))
        assert elsewhere.asked == ["q"]  # other settings: another request


def test_loglikelihoods_are_cached_too(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        inner = Recording()
        reqs = [LoglikelihoodRequest("ctx", " yes"), LoglikelihoodRequest("ctx", " no")]
        first = asyncio.run(CachedModel(inner, store).loglikelihood(reqs))
        second = asyncio.run(CachedModel(inner, store).loglikelihood(reqs))
        assert first == second and inner.asked == [" yes", " no"]


def test_each_agent_turn_is_cached_by_its_conversation_and_replayed_with_its_calls(tmp_path: Path) -> None:
    """An agent over the cache (scoring.agent): a second run of the same trajectory asks the model nothing, and
    its turns come back with their calls, so the tools run as before."""

    from proctor.core.model import Capability, Generation, Message, ModelBase
    from proctor.core.tools import ToolCall
    from proctor.scoring.agent import Agent, python_tool

    class Caller(ModelBase):
        name, capabilities = "caller", frozenset({Capability.GENERATE, Capability.TOOLS})
        asked = 0

        async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
            self.asked += len(requests)
            return [Generation(text="done") if any(m.role == "tool" for m in r.messages) else
                    Generation(tool_calls=(ToolCall("c0", "math.add", '{"a": 2, "b": 3}'),)) for r in requests]

    def add(a: int, b: int) -> int:
        return a + b

    inner = Caller()
    with Store(tmp_path / "s.sqlite") as store:
        runs = [asyncio.run(Agent(CachedModel(inner, store), [python_tool(add, name="math.add")]).run(
            [Message("user", "2+3?")])) for _ in range(2)]
    assert inner.asked == 2 and [t.turns[0].cached for t in runs] == [False, True]
    assert runs[0].turns[0].tool_calls == runs[1].turns[0].tool_calls and runs[1].turns[0].results[0].content == "5"
