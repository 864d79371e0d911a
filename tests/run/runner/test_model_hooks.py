"""The runner reaches a backend's optional hooks (core.model.Model) as typed attributes, through the cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from proctor.core.model import GenerateRequest, Generation, GenerationSettings
from proctor.data.tasks import Task
from proctor.util.errors import ProctorError

from .conftest import CountingModel, LetterPrompts, make_items, run_with


class LocalModel(CountingModel):
    """A local backend: a context window, exact prompt counts, a generation batch, state in the run directory."""

    def __init__(self, gold: dict[str, str], window: int | None = None) -> None:
        super().__init__(gold)
        self.context_length = window
        self.batches: list[int] = []
        self.dirs: dict[str, Path] = {}

    @property
    def generation_chunk_size(self) -> int | None:
        return 3

    def prompt_tokens(self, request: GenerateRequest) -> int | None:
        return sum(len(m.content.split()) for m in request.messages)  # one token a word

    def set_log_dir(self, run_dir: Path) -> None:
        self.dirs["log"] = run_dir

    def use_run_dir(self, run_dir: Path) -> None:
        self.dirs["state"] = run_dir

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.batches.append(len(requests))
        return await super().generate(requests)


def _config(tmp_path: Path, max_tokens: int = 8) -> dict[str, Any]:
    return {"settings": GenerationSettings(max_tokens=max_tokens), "out": tmp_path / "run",
                     "store": tmp_path / "store.sqlite", "record_history": False, "progress": False}


def test_generation_batches_and_run_dir_hooks_reach_the_backend_through_the_cache(tmp_path: Path) -> None:
    items = make_items(7)
    model = LocalModel({it.identifier: str(it.response) for it in items})
    log = run_with(Task("t", items, LetterPrompts()), model, **_config(tmp_path))
    assert len(log.samples) == 7
    assert model.batches == [3, 3, 1]  # generation_chunk_size, read through CachedModel
    assert model.dirs == {"log": tmp_path / "run", "state": tmp_path / "run"}


def test_exact_prompt_counts_refuse_a_prompt_longer_than_the_context(tmp_path: Path) -> None:
    items = make_items(3)
    items[1] = items[1].model_copy(update={"prompt": " ".join(f"w{i}" for i in range(300))})
    model = LocalModel({it.identifier: str(it.response) for it in items}, window=100)
    with pytest.raises(ProctorError, match=r"prompt longer than fake:counting's context: 1 of 3, longest 30\d > 100"):
        run_with(Task("t", items, LetterPrompts()), model, **_config(tmp_path))
    assert model.batches == [] and not (tmp_path / "run").exists()
    fits = LocalModel({it.identifier: str(it.response) for it in items}, window=400)
    with pytest.raises(ProctorError, match=r"the longest prompt \(30\d tokens\) \+ --max-tokens 200 exceeds"):
        run_with(Task("t", items, LetterPrompts()), fits, **_config(tmp_path, max_tokens=200))


def test_the_tokenizer_hook_reaches_token_counter_through_the_cache_and_the_cost_guard(tmp_path: Path) -> None:
    from decimal import Decimal

    from proctor.core.model import ModelBase
    from proctor.core.money import Money
    from proctor.run.cache import CachedModel
    from proctor.run.pricing import CostGuard, GuardedModel, token_counter
    from proctor.run.store import Store

    class Tokenized(LocalModel):
        @property
        def has_tokenizer(self) -> bool:
            return True

        def count_prompt_tokens(self, text: str) -> int:
            return len(text.split())

    inner = Tokenized({})
    guarded = GuardedModel(inner, CostGuard(Decimal(1)), concurrency=1, price=Money(input=Decimal(1), output=Decimal(1)))
    cached = CachedModel(guarded, Store(tmp_path / "cache.sqlite"))
    count = token_counter(cached)
    assert count is not None and count("three words here") == 3
    assert token_counter(LocalModel({})) is None  # no tokenizer: proctor does not guess one
    with pytest.raises(NotImplementedError, match="no tokenizer"):
        ModelBase().count_prompt_tokens("x")
