"""Names that come from data (a dataset's `name`, a `hasPart` entry) never become paths unsafely."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(name: str, fallback: str = "dataset") -> str:
    """`name` as one harmless path component: no separators, no `..`, no leading dot, no control characters.

    `../../x` becomes `x`, `/abs/path` becomes `abs-path`; an empty result falls back to `fallback`.
    """
    text = unicodedata.normalize("NFKC", name)
    text = _UNSAFE.sub("-", text.replace("\\", "/").replace("/", "-"))
    text = re.sub(r"\.{2,}", ".", text).strip(".-_")
    return text[:120] or fallback


def is_inside(base: str | Path, relative: str) -> bool:
    """Whether `base/relative` names something inside `base`: relative, no `..` escape, no symlink way out."""
    if not relative or os.path.isabs(relative) or "\x00" in relative:
        return False
    root = Path(base).resolve()
    target = (root / relative).resolve()
    return target == root or root in target.parents


__all__ = ["is_inside", "safe_component"]
