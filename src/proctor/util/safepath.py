"""Names that come from data (a dataset's `name`, a `hasPart` entry) never become paths unsafely."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
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


def short_hash(text: str, length: int = 8) -> str:
    """A stable short fingerprint of `text` (hex), to tell apart names that sanitise alike."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def is_safe_component(name: str) -> bool:
    """Whether `name` is usable as is: one non-empty component, no separator, not hidden, `.` or `..`."""
    return bool(name) and not name.startswith(".") and "/" not in name and "\\" not in name and "\x00" not in name


def distinct_components(names: Sequence[str], sanitise: Callable[[str], str] = safe_component) -> list[str]:
    """One safe path component per name, distinct for distinct names (case-blind, as some file systems are).

    A name keeps its sanitised form when that is safe and no other name shares it; otherwise a short hash of
    the original name is appended (`a b` and `a_b` → `a_b` and `a_b-1f2e3d4c`; `..` → `model-…`). The same
    name twice maps to the same component: callers that need one directory per entry refuse duplicates.
    """
    bases = []
    for name in names:
        base = sanitise(name)
        bases.append(base if is_safe_component(base) else f"{safe_component(base, 'item')}-{short_hash(name)}")
    owners: dict[str, set[str]] = {}
    for name, base in zip(names, bases, strict=True):
        owners.setdefault(base.casefold(), set()).add(name)
    exact: dict[str, str] = {}  # in a clash, the first name already equal to its form keeps it bare
    for name, base in zip(names, bases, strict=True):
        if name == base:
            exact.setdefault(base.casefold(), name)
    out = []
    for name, base in zip(names, bases, strict=True):
        key = base.casefold()
        plain = len(owners[key]) == 1 or exact.get(key) == name
        out.append(base if plain else f"{base}-{short_hash(name)}")
    return out


__all__ = ["distinct_components", "is_inside", "is_safe_component", "safe_component", "short_hash"]
