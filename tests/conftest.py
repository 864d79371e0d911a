"""Shared fixtures: a tiny random-weight causal LM built on the spot (no downloads)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """A suite started with SIGINT ignored (a background job, `nohup`, some CI runners) would hand that to every
    child it starts (an ignored signal stays ignored across exec), and the Ctrl-C tests' children would never
    see their SIGINT: restore Python's default handler, so children start with the default disposition."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (`make test`) keeps each `xdist_group` on one worker by suffixing its tests' ids with
    `@group`; pytest-xdist 3.8 writes the suffix to `item._nodeid`, which pytest >= 9.2 no longer reads (ids live
    in `item._id`), so the groups were silently spread over every worker: each worker started its own vLLM
    servers and managed engines (the vllm group) and its own Ray head. Add the suffix where xdist's did not take.

    Under xdist, the tests marked `long` (each tens of seconds or minutes, one process after another) go first
    (a stable sort): xdist hands out groups (largest first), then single tests in collection order, so a long
    test collected last (tests/test_readme.py) would run alone at the end while the other workers sit idle."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and sorts, the same way
        items.sort(key=lambda item: item.get_closest_marker("long") is None)
    if not getattr(config.option, "loadgroup", False):  # set on xdist workers under --dist loadgroup
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)


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
