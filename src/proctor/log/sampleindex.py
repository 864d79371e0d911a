"""Where each sample of a samples.jsonl is, for a run of any size: the last record of each sample id (a retried
error replaces the first), in numpy columns of a few bytes a record, never the ids themselves.

Each record's id is kept as a 128-bit hash (blake2b): two ids share one with a chance near 1e-26 at a million
records. The index gives the latest records in the order their ids first appear (what `read_run` gives), looks a
sample id up (a run's own order: plan order, a merge's), and sorts by (item, epoch) (what exporters write), the
last from each record's id read once more, items as codes."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator
from typing import Any


def _halves(sample_id: str) -> tuple[int, int]:
    digest = hashlib.blake2b(sample_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little", signed=True), int.from_bytes(digest[8:], "little", signed=True)


class SampleIndex:
    """The latest record of each sample id: its line number and byte offset, as columns.

    Built from (line number, byte offset, sample id) of every record, in file order."""

    def __init__(self, records: Iterable[tuple[int, int, str]]) -> None:
        import numpy as np

        hi, lo, lines, offsets = array("q"), array("q"), array("q"), array("q")
        for lineno, offset, sample_id in records:
            a, b = _halves(sample_id)
            hi.append(a)
            lo.append(b)
            lines.append(lineno)
            offsets.append(offset)
        n = len(hi)
        h1, h2 = np.frombuffer(hi, dtype=np.int64), np.frombuffer(lo, dtype=np.int64)
        by_key = np.lexsort((np.arange(n), h2, h1))  # by id, then by position: a group's last is its latest
        s1, s2 = h1[by_key], h2[by_key]
        starts = np.flatnonzero(np.r_[True, (s1[1:] != s1[:-1]) | (s2[1:] != s2[:-1])]) if n else np.zeros(0, int)
        ends = np.r_[starts[1:], n] - 1 if n else starts
        self.records = n
        self.key_hi, self.key_lo = s1[starts].copy(), s2[starts].copy()  # sorted, one per sample id
        self.first = by_key[starts]  # the record where each id first appears
        self.latest = by_key[ends]  # its latest record
        self.lines = np.frombuffer(lines, dtype=np.int64).copy()
        self.offsets = np.frombuffer(offsets, dtype=np.int64).copy()

    def __len__(self) -> int:
        return len(self.key_hi)

    @property
    def repeats(self) -> bool:
        """Whether some id has several records (a retried error): file order then differs from `in_order`'s."""
        return len(self) != self.records

    def _at(self, k: Any) -> tuple[int, int]:
        pos = int(self.latest[k])
        return int(self.lines[pos]), int(self.offsets[pos])

    def in_order(self) -> Iterator[tuple[int, int]]:
        """(line, offset) of each id's latest record, in the order the ids first appear."""
        import numpy as np

        for k in np.argsort(self.first, kind="stable"):
            yield self._at(k)

    def get(self, sample_id: str) -> tuple[int, int] | None:
        """(line, offset) of the id's latest record; None when the run has none."""
        import numpy as np

        a, b = _halves(sample_id)
        lo, hi = np.searchsorted(self.key_hi, a, "left"), np.searchsorted(self.key_hi, a, "right")
        for k in range(int(lo), int(hi)):
            if self.key_lo[k] == b:
                return self._at(k)
        return None

    def __contains__(self, sample_id: object) -> bool:
        return isinstance(sample_id, str) and self.get(sample_id) is not None

    def by_item(self, ids: Iterable[str]) -> Iterator[tuple[int, int]]:
        """(line, offset) of each latest record in (item id, epoch) order; `ids` are their sample ids, in the order
        of `in_order` (read once more from the file: kept as item codes and epochs, a few bytes a record)."""
        import numpy as np

        names: dict[str, int] = {}
        items, epochs = array("q"), array("q")
        for sample_id in ids:
            item, epoch = item_order(sample_id)
            items.append(names.setdefault(item, len(names)))
            epochs.append(epoch)
        rank = np.empty(len(names), dtype=np.int64)
        rank[np.argsort(np.array(list(names), dtype=object), kind="stable")] = np.arange(len(names))
        del names
        positions = np.argsort(self.first, kind="stable")  # the k of each id, in first-appearance order
        order = np.lexsort((np.frombuffer(epochs, dtype=np.int64), rank[np.frombuffer(items, dtype=np.int64)]))
        for k in positions[order]:
            yield self._at(k)


def item_order(sample_id: str) -> tuple[str, int]:
    """(item id, epoch) from a sample id `ITEM#EPOCH`, the order exporters write samples in."""
    item, _, epoch = sample_id.rpartition("#")
    return (item, min(int(epoch), _MAX_EPOCH)) if epoch.isdigit() and epoch.isascii() and item else (sample_id, 0)


_MAX_EPOCH = 2**62  # an epoch past any run's (a hand-edited id) sorts last, as one number


__all__ = ["SampleIndex", "item_order"]
