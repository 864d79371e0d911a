"""A stand-in for nltk's `punkt_tab` data (which cannot be downloaded offline): untrained Punkt parameters with
three abbreviations. IFEval's sentence-counting checkers then run here; lm-eval's and proctor's read the same
data, so comparing them stays exact (sentence counts differ from the trained English model's)."""

from __future__ import annotations

from pathlib import Path

import pytest


def punkt_dir(root: Path) -> Path:
    english = root / "tokenizers" / "punkt_tab" / "english"
    english.mkdir(parents=True, exist_ok=True)
    for name, text in (("collocations.tab", ""), ("sent_starters.txt", ""), ("abbrev_types.txt", "mr\ndr\ne.g\n"),
                       ("ortho_context.tab", "")):
        (english / name).write_text(text)
    return root


@pytest.fixture
def punkt(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """nltk's data path with the stand-in first (set before lm-eval's checkers are imported)."""
    import nltk

    root = punkt_dir(tmp_path_factory.mktemp("nltk"))
    monkeypatch.setattr(nltk.data, "path", [str(root), *nltk.data.path])
    return root
