"""A stand-in for nltk's `punkt_tab` data (which cannot be downloaded offline): untrained Punkt parameters with
three abbreviations. IFEval's sentence-counting checkers then run here; lm-eval's and proctor's read the same
data, so comparing them stays exact (sentence counts differ from the trained English model's)."""

from __future__ import annotations

from pathlib import Path


def punkt_dir(root: Path) -> Path:
    english = root / "tokenizers" / "punkt_tab" / "english"
    english.mkdir(parents=True, exist_ok=True)
    for name, text in (("collocations.tab", ""), ("sent_starters.txt", ""), ("abbrev_types.txt", "mr\ndr\ne.g\n"),
                       ("ortho_context.tab", "")):
        (english / name).write_text(text)
    return root
