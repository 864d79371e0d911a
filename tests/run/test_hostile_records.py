"""Issue 51 item 4: a run directory's records (checksums.json, signature.json, manifest.json, shard.json) that are a
FIFO, `/dev/zero`, a sparse 5 GB file or JSON nested 100k deep are one line `path: what is wrong`, exit 2, in
`verify`, `merge` and a resume: never a hang, a MemoryError or a RecursionError traceback."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from proctor.cli import main


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(5 << 30)  # 5 GB that take no disk


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")


HOSTILE: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "not a regular file"),
    "dev-zero": (_dev_zero, "not a regular file"),
    "sparse-5GB": (_sparse, "over the"),
    "deep-json": (_deep, "nested deeper than 200"),
}


@pytest.fixture(autouse=True)
def _never_hang() -> Iterator[None]:
    """A read that waits on a FIFO fails the test after 60 s instead of hanging the suite."""
    def stop(*_: object) -> None:
        raise TimeoutError("hung reading a hostile file")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _items(tmp_path: Path) -> Path:
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "AB"[i % 2],
             "choices": {"A": "yes", "B": "no"}} for i in range(6)]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return items


def _argv(items: Path, out: Path, *extra: str) -> list[str]:
    return ["run", str(items), "--model", "scripted:first", "-o", str(out), "--no-progress", "--no-history",
            "--no-cache", *extra]


def _replace(path: Path, kind: str) -> str:
    make, why = HOSTILE[kind]
    path.unlink(missing_ok=True)
    make(path)
    return why


def _one_line(capsys: pytest.CaptureFixture[str], path: Path, why: str) -> None:
    err = capsys.readouterr().err.strip()
    named = [line for line in err.splitlines() if f"{path}:" in line]
    assert "Traceback" not in err and len(named) == 1 and why in named[0], err


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("name", ["checksums.json", "signature.json", "results.json"])
def test_verify_refuses_a_hostile_record_in_one_line(kind: str, name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(_argv(_items(tmp_path), run)) == 0
    why = _replace(run / name, kind)
    capsys.readouterr()
    assert main(["verify", str(run)]) == 2
    _one_line(capsys, run / name, why)


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("name", ["checksums.json", "shard.json", "manifest.json"])
def test_merge_refuses_a_hostile_record_in_one_line(kind: str, name: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path)
    for k in (1, 2):
        assert main(_argv(items, tmp_path / f"s{k}", "--shard", f"{k}/2")) == 0
    why = _replace(tmp_path / "s1" / name, kind)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m")]) == 2
    _one_line(capsys, tmp_path / "s1" / name, why)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("name", ["checksums.json", "manifest.json", "samples.jsonl"])
def test_resume_refuses_a_hostile_record_in_one_line(kind: str, name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path)
    argv = _argv(items, tmp_path / "r")
    assert main(argv) == 0
    why = _replace(tmp_path / "r" / name, kind)
    if name == "samples.jsonl" and kind == "deep-json":  # a finished run's samples: its checksums find the edit
        why = "differs from the line checksums.json recorded"
    capsys.readouterr()
    assert main(argv) == 2
    _one_line(capsys, tmp_path / "r" / name, why)
