"""Shared fixtures: a tiny random-weight causal LM built on the spot (no downloads)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """A suite started with SIGINT ignored (a background job, `nohup`, some CI runners) would hand that to every
    child it starts (an ignored signal stays ignored across exec), and the Ctrl-C tests' children would never
    see their SIGINT: restore Python's default handler, so children start with the default disposition."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A llama-style tiny model with a BPE tokenizer that prepends BOS."""
    pytest.importorskip("torch")
    from proctor.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GPT-2-style tiny model (learned positions), for a second architecture."""
    pytest.importorskip("torch")
    from proctor.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-gpt2"), architecture="gpt2", seed=1)
