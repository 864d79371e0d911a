"""Item 5 of issue 13: one writer per run directory; a second run says who holds it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.run.lock import LOCK_NAME, RunDirBusy, hold_run_dir

GOOD = Path(__file__).parents[1] / "fixtures" / "items" / "good.jsonl"


def test_second_holder_is_refused_with_who_holds_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    busy = pytest.raises(RunDirBusy, match=rf"pid {os.getpid()} on {socket.gethostname()}, started 20")
    with hold_run_dir(run), busy, hold_run_dir(run):
        pass
    with hold_run_dir(run):  # released: the next run gets it
        pass


def test_a_second_run_on_the_same_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with hold_run_dir(out):
        code = main(["run", str(GOOD), "-m", "scripted:first", "-o", str(out), "--store", str(tmp_path / "s.sqlite"),
                     "--no-progress"])
    assert code == 2
    assert "is being written by another run (pid" in capsys.readouterr().err
    assert not (out / "samples.jsonl").exists()


def test_a_killed_holder_never_blocks_a_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = (f"import time, pathlib; from proctor.run.lock import hold_run_dir\n"
            f"with hold_run_dir(pathlib.Path({str(out)!r})):\n print('held', flush=True); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    with pytest.raises(RunDirBusy, match=f"pid {holder.pid}"), hold_run_dir(out):
        pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    time.sleep(0.05)
    with hold_run_dir(out):
        assert (out / LOCK_NAME).exists()


def test_a_refused_start_leaves_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "new"
    with pytest.raises(RuntimeError), hold_run_dir(out):
        raise RuntimeError("the store is damaged")
    assert not out.exists()


def test_a_failed_start_keeps_a_directory_holding_batch_state(tmp_path: Path) -> None:
    """Batches listed in batches.json are paid for: the directory stays for the resume (issue 22, item 1)."""
    from proctor.core.rundir import PAID_STATE

    for error in (RuntimeError, KeyboardInterrupt):
        run = tmp_path / error.__name__
        with pytest.raises(error), hold_run_dir(run):
            (run / PAID_STATE).write_text('{"version": 1, "jobs": []}')
            raise error
        assert (run / PAID_STATE).exists()
    with pytest.raises(RuntimeError), hold_run_dir(tmp_path / "plain"):
        raise RuntimeError  # nothing paid, nothing sampled: removed as before
    assert not (tmp_path / "plain").exists()
