"""Columns of a streamed run: what a one-pass summary keeps of each sample, a few bytes a sample."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload


class Labels(Sequence[str]):
    """A column of labels (items, clusters) held as one 4-byte code a row and each distinct label once: what the
    intervals read of a streamed run's samples, a few bytes a sample. Reads as the list of its labels."""

    def __init__(self) -> None:
        self._codes = array("i")
        self._names: list[str] = []
        self._index: dict[str, int] = {}

    def append(self, label: str) -> None:
        code = self._index.setdefault(label, len(self._names))
        if code == len(self._names):
            self._names.append(label)
        self._codes.append(code)

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self._names[c] for c in self._codes[i]]
        return self._names[self._codes[i]]

    def __iter__(self) -> Iterator[str]:
        names = self._names
        return (names[c] for c in self._codes)


__all__ = ["Labels"]
