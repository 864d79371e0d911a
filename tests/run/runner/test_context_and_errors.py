"""The context-window check counts an hf model's prompts with its own tokenizer; failures are grouped by kind;
a local model's forward passes raise no transformers deprecation warning."""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from pathlib import Path

import pytest

from proctor.core.model import GenerationSettings
from proctor.data.tasks import Task
from proctor.run.runner import error_groups, error_kinds
from proctor.util.errors import ProctorError

from .conftest import LetterPrompts, make_items, run_with


def test_error_kinds_group_numbers_aside() -> None:
    errors = Counter({"prompt has 2045 tokens; max_length is 1024": 1, "prompt has 1700 tokens; max_length is 1024": 13})
    assert error_kinds(errors) == ["prompt longer than the model's context: 14 of 14, longest 2,045 > 1,024"]
    mixed = Counter({"HTTP 500 on attempt 3": 2, "HTTP 500 on attempt 4": 1, "judge replied without a GRADE line": 1})
    assert error_kinds(mixed) == ["HTTP 500 on attempt 3 (3 of 4)", "judge replied without a GRADE line (1 of 4)"]
    assert error_kinds(Counter({"bad key": 8})) == ["bad key"]
    judged = error_groups({"judge j could not grade the answer: prompt has 9000 tokens; max_length is 2048": 2,
                           "judge j could not grade the answer: prompt has 16402 tokens; max_length is 2048": 1})
    assert [(g.count, g.describe()) for g in judged] == [
        (3, "judge j could not grade the answer: prompt longer than the model's context, longest 16,402 > 2,048")]


def _long_task(words: int) -> Task:
    items = make_items(3)
    long_question = " ".join(f"w{i}" for i in range(words))
    items[1] = items[1].model_copy(update={"prompt": long_question})
    return Task("long", items, LetterPrompts())


def test_an_hf_prompt_longer_than_the_context_is_refused_with_exact_counts(tiny_model_dir: Path, tmp_path: Path) -> None:
    from proctor.models import get_model

    model = get_model(f"hf:{tiny_model_dir}", max_length=256)
    config = {"settings": GenerationSettings(max_tokens=8), "out": tmp_path / "r", "use_cache": False,
                  "record_history": False, "progress": False}
    with pytest.raises(ProctorError, match=r"prompt longer than hf:.*'s context: 1 of 3, longest [\d,]+ > 256 tokens"):
        run_with(_long_task(400), model, **config)  # 400 words: ~2,000 characters, far more than 256 tokens
    assert not (tmp_path / "r").exists()


def test_forward_passes_raise_no_deprecation_warning(tiny_model_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    from proctor.core.model import LoglikelihoodRequest
    from proctor.models import get_model

    model = get_model(f"hf:{tiny_model_dir}")
    reqs = [LoglikelihoodRequest("The answer is", c) for c in (" yes", " no", " maybe")]  # a shared prefix: KV cache
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING):
        warnings.simplefilter("error")
        out = model.loglikelihood_sync(reqs)  # type: ignore[attr-defined]
    assert len(out) == 3 and model.stats["shared_roots"] >= 1  # type: ignore[attr-defined]
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]
