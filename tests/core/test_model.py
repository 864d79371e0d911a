"""The Model protocol: its identity (what determines the answers, and nothing that does not) and its one
capability check (`probe`, whose static part is `require`)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from proctor.core.model import (
    Capability,
    GenerateRequest,
    Message,
    ModelBase,
    ModelWrapper,
    require,
    weights_fingerprint,
)
from proctor.util.errors import CapabilityError


def test_weights_fingerprint_follows_content_not_place(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text('{"hidden": 8}')
    (d / "model.safetensors").write_bytes(b"\0" * 64)
    first = weights_fingerprint(d)
    assert first is not None and first == weights_fingerprint(d)
    (d / "config.json").write_text('{"hidden": 16}')
    assert weights_fingerprint(d) != first  # another config: another model
    second = weights_fingerprint(d)
    os.utime(d / "model.safetensors", ns=(1, 1))  # weights rewritten in place
    assert weights_fingerprint(d) != second
    assert weights_fingerprint(tmp_path / "missing") is None  # a hub id: the backend uses the revision


def test_default_identity_is_the_spec() -> None:
    class M(ModelBase):
        name = "x:y"

    assert M().identity() == {"spec": "x:y"}


class _ChatOnly(ModelBase):
    name = "chat:only"
    capabilities = frozenset({Capability.GENERATE})


def test_require_names_what_is_missing_why_and_what_the_model_can_do() -> None:
    require(_ChatOnly(), [Capability.GENERATE])  # declared: nothing raised
    with pytest.raises(CapabilityError) as e:
        require(_ChatOnly(), [Capability.LOGLIKELIHOOD, Capability.GENERATE])
    assert str(e.value) == ("chat:only cannot loglikelihood (a log-likelihood run scores each option's "
                            "log-probability); it supports: generate")


def test_probe_is_require_unless_a_backend_asks_more() -> None:
    asyncio.run(_ChatOnly().probe([Capability.GENERATE]))
    with pytest.raises(CapabilityError, match="^chat:only cannot loglikelihood"):
        asyncio.run(_ChatOnly().probe({Capability.LOGLIKELIHOOD}))
    with pytest.raises(CapabilityError, match="it supports: nothing"):
        asyncio.run(ModelBase().probe([Capability.GENERATE]))


class _Local(ModelBase):
    """A local backend that batches, counts prompt tokens exactly and keeps state in the run directory."""

    name = "local:m"
    capabilities = frozenset({Capability.GENERATE})
    context_length = 512

    def __init__(self) -> None:
        self.dirs: list[tuple[str, Path]] = []

    @property
    def generation_chunk_size(self) -> int | None:
        return 8

    def prompt_tokens(self, request: GenerateRequest) -> int | None:
        return sum(len(m.content.split()) for m in request.messages)

    def set_log_dir(self, run_dir: Path) -> None:
        self.dirs.append(("log", run_dir))

    def use_run_dir(self, run_dir: Path) -> None:
        self.dirs.append(("state", run_dir))


def test_optional_hooks_default_to_knowing_nothing(tmp_path: Path) -> None:
    m = ModelBase()
    request = GenerateRequest((Message("user", "a b c"),))
    assert (m.context_length, m.generation_chunk_size, m.in_flight_limit, m.prompt_tokens(request)) == (None,) * 4
    m.set_log_dir(tmp_path)
    m.use_run_dir(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_wrapper_passes_every_hook_through(tmp_path: Path) -> None:
    inner = _Local()
    outer = ModelWrapper(ModelWrapper(inner))  # e.g. the cache around the cost guard
    request = GenerateRequest((Message("user", "a b c"),))
    assert (outer.name, outer.capabilities, outer.context_length) == ("local:m", inner.capabilities, 512)
    assert (outer.generation_chunk_size, outer.in_flight_limit, outer.prompt_tokens(request)) == (8, None, 3)
    outer.set_log_dir(tmp_path)
    outer.use_run_dir(tmp_path / "run")
    assert inner.dirs == [("log", tmp_path), ("state", tmp_path / "run")]
    assert outer.identity() == {"spec": "local:m"} and outer.describe() == inner.describe()
    with pytest.raises(CapabilityError, match="cannot loglikelihood"):
        asyncio.run(outer.probe([Capability.LOGLIKELIHOOD]))
