"""The tiny model: its shape is one record (`TinyShape`), written into the model's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")


def test_the_shape_is_the_models_config(tmp_path: Path) -> None:
    from proctor.models.tiny import TinyShape, build_tiny_model

    path = build_tiny_model(tmp_path / "m", shape=TinyShape(hidden_size=32, num_layers=1, num_heads=2,
                                                             max_positions=128))
    config = json.loads((path / "config.json").read_text())
    assert (config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"],
            config["max_position_embeddings"], config["intermediate_size"]) == (32, 1, 2, 128, 64)
    assert json.loads((path / "tokenizer_config.json").read_text())["model_max_length"] == 128
