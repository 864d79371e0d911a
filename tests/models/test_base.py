"""The Model protocol: its identity (what determines the answers, and nothing that does not) and its one
capability check (`probe`, whose static part is `require`)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from proctor.errors import CapabilityError
from proctor.models.base import Capability, ModelBase, require, weights_fingerprint


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
