"""A zip archive written member by member whose memory does not grow with its members.

`zipfile.ZipFile` keeps a `ZipInfo` per member (and a name → info dict) until it writes the central directory at
close: about 430 bytes a member, 52 MB for an Inspect log of 120,000 samples (#40). `spilled_zip` gives a
`ZipFile` whose member records wait in a temporary file instead, read back one at a time when the central
directory is written. The archive is byte for byte the one `ZipFile` writes; only writing is supported, and a
member's name must not repeat (nothing is kept to check it against).
"""

from __future__ import annotations

import pickle
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


class _SpilledInfos(list[zipfile.ZipInfo]):
    """`ZipFile.filelist` on disk: `append` pickles the record to a temporary file; iteration reads them back in
    order; `len` counts them (the zip64 decision reads it). It is a list only to be accepted where one is."""

    def __init__(self, spill: IO[bytes]) -> None:
        super().__init__()
        self._spill = spill
        self._count = 0

    def append(self, info: zipfile.ZipInfo) -> None:
        pickle.dump(info, self._spill, protocol=pickle.HIGHEST_PROTOCOL)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[zipfile.ZipInfo]:
        self._spill.flush()
        with open(self._spill.name, "rb") as f:  # a second handle: appends and reads never share a position
            for _ in range(self._count):
                yield pickle.load(f)  # our own records, written above in this process

    def __bool__(self) -> bool:
        return self._count > 0


class _Unkept(dict[str, zipfile.ZipInfo]):
    """`ZipFile.NameToInfo` keeping nothing (names are not looked up while writing)."""

    def __setitem__(self, key: str, value: zipfile.ZipInfo) -> None:
        return None


@contextmanager
def spilled_zip(path: str | Path, **kwargs: Any) -> Iterator[zipfile.ZipFile]:
    """`zipfile.ZipFile(path, "w", **kwargs)` with its member records in a temporary file until it closes."""
    with tempfile.NamedTemporaryFile(prefix="proctor-zip-", suffix=".infos") as spill:
        zf = zipfile.ZipFile(path, "w", **kwargs)
        zf.filelist = _SpilledInfos(spill)
        zf.NameToInfo = _Unkept()
        try:
            yield zf
        finally:
            zf.close()


__all__ = ["spilled_zip"]
