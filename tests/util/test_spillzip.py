"""`spilled_zip`: the archive `zipfile.ZipFile` writes, byte for byte, with its member records kept on disk."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

from proctor.util.spillzip import spilled_zip


def _write(zf: zipfile.ZipFile, n: int) -> None:
    for i in range(n):
        info = zipfile.ZipInfo(f"samples/{i}_epoch_{i % 3}.json", date_time=(2026, 11, 28, 12, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, f'{{"id": {i}, "text": "{"x" * (i % 50)}"}}'.encode())
    zf.writestr(zipfile.ZipInfo("header.json", date_time=(2026, 11, 28, 12, 0, 0)), b"{}")


def test_the_archive_is_the_one_zipfile_writes_and_reads_back(tmp_path: Path) -> None:
    """66,000 members (past zip's 65,535: the zip64 end record) and a deflated, a stored member: equal bytes."""
    plain, spilled = tmp_path / "plain.zip", tmp_path / "spilled.zip"
    with zipfile.ZipFile(plain, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        _write(zf, 66_000)
    with spilled_zip(spilled, compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        _write(zf, 66_000)
    assert spilled.read_bytes() == plain.read_bytes()
    with zipfile.ZipFile(spilled) as zf:
        assert zf.testzip() is None and len(zf.namelist()) == 66_001
        assert zf.read("samples/65999_epoch_2.json").startswith(b'{"id": 65999')


def test_memory_does_not_grow_with_the_members(tmp_path: Path) -> None:
    """What the writer holds after 5,000 members is a few KB, not ZipFile's ~430 bytes a member."""
    with spilled_zip(tmp_path / "a.zip") as zf:
        _write(zf, 1_000)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        _write(zf, 5_000)
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    assert held < 100_000, held  # ZipFile: ~2 MB


def test_an_empty_archive(tmp_path: Path) -> None:
    with spilled_zip(tmp_path / "e.zip"):
        pass
    assert zipfile.ZipFile(tmp_path / "e.zip").namelist() == []
