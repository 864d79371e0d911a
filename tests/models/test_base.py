"""The Model protocol's identity: what determines the answers, and nothing that does not."""

from __future__ import annotations

import os
from pathlib import Path

from proctor.models.base import ModelBase, weights_fingerprint


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
