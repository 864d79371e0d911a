"""Item 4 of issue 13: directory outputs are built beside the target and swapped in whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.data.formats.commoneval import read_commoneval
from proctor.util.errors import InputError
from proctor.util.textio import atomic_directory

ITEM = {"modality": "boolean", "prompt": "p", "response": "True"}


def _items(path: Path, n: int, tag: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({**ITEM, "identifier": f"{tag}.{i}"}) + "\n" for i in range(n)))
    return path


def test_a_crash_mid_write_leaves_the_old_directory_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_directory(out) as tmp:
        (tmp / "a.txt").write_text("new")
        raise RuntimeError("killed")
    assert [p.name for p in out.iterdir()] == ["a.txt"] and (out / "a.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary sibling left


def test_swap_replaces_whole_and_carries_what_is_asked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.jsonl").write_text("old")
    (out / "README").write_text("mine")
    with atomic_directory(out, carry=lambda name: name == "README") as tmp:
        (tmp / "new.jsonl").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["README", "new.jsonl"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_convert_killed_mid_way_never_mixes_old_and_new_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ce"
    assert main(["convert", str(_items(tmp_path / "a" / "data.jsonl", 6, "old")), "--to", "commoneval", "-o", str(out),
                 "--shard-size", "2"]) == 0
    (out / "notes.md").write_text("kept")
    calls = 0
    real = Path.write_bytes
    from proctor.data.formats.commoneval import complete_metadata, write_commoneval
    from proctor.data.formats.detect import load_itemset

    new = complete_metadata(load_itemset(_items(tmp_path / "b" / "data.jsonl", 4, "new")), {}, "data.jsonl", [])

    def dies_on_second_file(self: Path, *a: object, **k: object) -> int:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt  # killed between two files
        return real(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_bytes", dies_on_second_file)
    with pytest.raises(KeyboardInterrupt):
        write_commoneval(out, new, 2)
    monkeypatch.setattr(Path, "write_bytes", real)
    assert calls == 2  # the writer really was cut off between two files
    ids = {it.identifier for it in read_commoneval(out).items}
    assert ids == {f"old.{i}" for i in range(6)}  # the old dataset, whole
    assert (out / "notes.md").read_text() == "kept"
    write_commoneval(out, new, 2)  # not killed: the new dataset, whole, and the user's file kept
    assert {it.identifier for it in read_commoneval(out).items} == {f"new.{i}" for i in range(4)}
    assert sorted(p.name for p in out.iterdir()) == ["data.yaml", "data_000.jsonl", "data_001.jsonl", "notes.md"]


def test_a_full_disk_during_an_atomic_write_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import errno
    import os

    from proctor.util.textio import write_json_atomic

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "results.json"
    with pytest.raises(OSError) as e:
        write_json_atomic(target, {"a": 1})
    assert e.value.filename == str(target) and not list(tmp_path.iterdir())  # nothing half-written
    out = tmp_path / "ce"
    assert main(["convert", str(_items(tmp_path / "a" / "data.jsonl", 3, "x")), "--to", "commoneval", "-o",
                 str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {out}: No space left on device"
    assert not out.exists()


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return int(child.stdout)


def test_stale_staging_folders_of_dead_writers_are_cleaned(tmp_path: Path) -> None:
    """Issue 32 #3: a kill -9 mid-write leaves a staging folder; the next write to the same target removes it
    when its writer (pid, on this host) is dead, and never one a live writer still owns."""
    from proctor.util.textio import staging_name

    target = tmp_path / "run"
    dead = tmp_path / f"{staging_name(target, _dead_pid())}abc123.tmp"
    live = tmp_path / f"{staging_name(target, __import__('os').getpid())}def456.tmp"
    for d in (dead, live):
        d.mkdir()
        (d / "manifest.json").write_text("{}")
    other = tmp_path / ".run.unknownwriter.tmp"  # no pid to check: left alone
    other.mkdir()
    with atomic_directory(target) as tmp:
        (tmp / "x").write_text("1")
    assert not dead.exists() and live.exists() and other.exists() and (target / "x").read_text() == "1"


@pytest.mark.parametrize("rows", [
    [],
    [{}],
    [{"a": 1}],
    [{"q": "line one\nline two", "options": ["x", "y"], "nested": {"k": [1, {"z": None}]}, "é": "ü\t\"q\""},
     {"pred": None, "model_outputs": ""}, [], [1, 2], "text", 3.5],
])
def test_a_json_list_written_row_by_row_is_json_dumps_byte_for_byte(tmp_path: Path, rows: list[object]) -> None:
    """llm-wc's results.json is written a row at a time (#40): the file equals `json.dumps(rows, indent=2)`."""
    from proctor.util.textio import write_json_atomic, write_json_list_atomic

    write_json_atomic(tmp_path / "whole.json", rows)
    assert write_json_list_atomic(tmp_path / "rows.json", iter(rows)) == len(rows)
    assert (tmp_path / "rows.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    assert json.loads((tmp_path / "rows.json").read_text()) == rows


def test_read_json_record_bounds_every_way_a_record_can_be_hostile(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 51 item 4: the one reader of run-directory records refuses a FIFO, a device, a file over its limit
    and deep JSON, each as one `path: what is wrong` InputError; a plain record reads."""
    from proctor.util.textio import read_json_record

    ok = tmp_path / "ok.json"
    ok.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert read_json_record(ok) == {"a": [1, 2]}
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * 30_000 + '"}', encoding="utf-8")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    monkeypatch.setenv("PROCTOR_MAX_RECORD_BYTES", "20000")
    for path, why in [(fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"),
                      (big, "over the 20,000-byte limit (raise PROCTOR_MAX_RECORD_BYTES"), (deep, "nested deeper")]:
        with pytest.raises(InputError) as caught:
            read_json_record(path)
        assert str(caught.value).startswith(f"{path}: ") and why in str(caught.value)
