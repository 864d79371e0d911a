"""Item 2 of issue 13: samples.jsonl holds only whole, newline-framed records.

A torn tail (a kill mid-append) is cut off before anything is appended and reported; a failed write (a
full disk) is undone and reported as one line with the path."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.errors import ProctorError
from proctor.runlog import Outcome, Sample, append_samples, iter_samples, repair_torn_tail

GOOD = Path(__file__).parent / "fixtures" / "items" / "good.jsonl"


def _sample(i: int) -> Sample:
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=Outcome.CORRECT, score=1.0, raw_output="é" * 50)


def test_torn_tail_is_cut_before_the_next_append(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0), _sample(1)])
    whole = path.read_bytes()
    torn = _sample(2).model_dump_json().encode()[:37]  # cut inside a multi-byte character's neighbourhood
    path.write_bytes(whole + torn)
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0", "q1#0"]  # the torn record is not read
    assert repair_torn_tail(path) == len(torn)
    assert "torn last record" in caplog.text
    assert path.read_bytes() == whole
    append_samples(path, [_sample(2)])
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0", "q1#0", "q2#0"]


def test_torn_tail_with_broken_utf8_is_still_readable(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0)])
    path.write_bytes(path.read_bytes() + _sample(1).model_dump_json().encode()[:-60][:60] + b"\xc3")
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0"]


def test_resume_after_a_torn_tail_then_report_works(tmp_path: Path) -> None:
    out, store = tmp_path / "run", tmp_path / "s.sqlite"
    args = ["run", str(GOOD), "-m", "scripted:first", "-o", str(out), "--store", str(store), "--no-progress"]
    assert main(args) == 0
    samples = out / "samples.jsonl"
    lines = samples.read_bytes().splitlines(keepends=True)
    samples.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-append
    assert main(args) == 0
    back = [json.loads(x) for x in samples.read_text().splitlines()]  # every line whole again
    assert len({s["sample_id"] for s in back}) == len(lines)
    assert main(["report", str(out), "-o", str(tmp_path / "r.md")]) == 0


def test_a_failed_append_is_undone_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0)])
    before = path.read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ProctorError, match=r"samples.jsonl: cannot write: No space left on device"):
        append_samples(path, [_sample(1), _sample(2)])
    assert path.read_bytes() == before


@pytest.fixture
def tiny_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 300 KB tmpfs (needs root and mount); skipped where it cannot be mounted."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not shutil.which("mount") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_run_is_one_line_and_exit_2(tiny_disk: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    big = "x" * 1500
    items.write_text("".join(json.dumps({"identifier": f"t.{i}", "modality": "choiceof3", "prompt": f"{big} {i}",
                                         "response": "B", "choices": {"A": "a", "B": "b", "C": "c"}}) + "\n"
                             for i in range(200)))
    out = tiny_disk / "run"
    cmd = [sys.executable, "-m", "proctor", "run", str(items), "-m", "scripted:first", "-o", str(out),
           "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and str(tiny_disk) in err[0], done.stderr
    samples = out / "samples.jsonl"
    for line in (samples.read_text().splitlines() if samples.exists() else []):  # only whole records on disk
        json.loads(line)


def test_expand_run_dirs_opens_folders_of_runs(tmp_path: Path) -> None:
    from proctor.runlog import MANIFEST, expand_run_dirs

    for name in ("b", "a"):
        (tmp_path / "many" / name).mkdir(parents=True)
        (tmp_path / "many" / name / MANIFEST).write_text("{}")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / MANIFEST).write_text("{}")
    (tmp_path / "one" / "inner").mkdir()
    (tmp_path / "one" / "inner" / MANIFEST).write_text("{}")
    got = expand_run_dirs([tmp_path / "one", tmp_path / "many", tmp_path / "missing"])
    assert got == [tmp_path / "one", tmp_path / "many" / "a", tmp_path / "many" / "b", tmp_path / "missing"]
