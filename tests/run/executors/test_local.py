"""`--executor local`: the shards as processes on this machine, through the same plan, worker, retry and merge
as Slurm and Ray; and the flags refused with one clear line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.core.spec import RunSpec
from proctor.run.executors import Settings, new_plan
from proctor.run.lock import hold_submitter

from .conftest import DATA, assert_same_run, env, proctor_cmd, read_run, run_proctor, wait_for


@pytest.mark.long
def test_local_shards_with_a_killed_shard_retried_equal_the_unsharded_run(tmp_path: Path) -> None:
    model = "scripted:random,delay=0.2"
    out, shards = tmp_path / "out", tmp_path / "out.shards"
    run = subprocess.Popen(proctor_cmd("run", DATA, "--model", model, "--shards", "3", "-o", str(out), "--store",
                                       str(tmp_path / "s.db")), cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    samples = shards / "shard-3-of-3" / "samples.jsonl"
    wait_for(lambda: samples.is_file() and samples.read_text().count("\n") >= 1, 60, "shard 3's first answer")
    first = json.loads((shards / "status" / "shard-3.json").read_text())
    os.kill(first["pid"], signal.SIGKILL)
    plain = run_proctor("run", DATA, "--model", model, "-o", str(tmp_path / "plain"), "--no-history",
                        "--store", str(tmp_path / "plain.db"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    assert f"retrying shard 3/3 (job local:{first['pid']} failed)" in stderr
    assert_same_run(out, tmp_path / "plain")
    manifest, _, _ = read_run(out)
    assert manifest["merged_from"] == [str(shards / f"shard-{k}-of-3") for k in (1, 2, 3)]
    assert manifest.get("shard") is None
    # the merged run is recorded once in the history, the shards not at all
    history = run_proctor("runs", "--store", str(tmp_path / "s.db"), "--json", cwd=tmp_path)
    assert history.returncode == 0, history.stderr
    assert [r["run_id"] for r in json.loads(history.stdout)] == [manifest["run_id"]]
    # the same command again: the merged run is there, nothing to do but say so
    again = run_proctor("run", DATA, "--model", model, "--shards", "3", "-o", str(out), "--store",
                        str(tmp_path / "s.db"), cwd=tmp_path)
    assert again.returncode == 2 and "exists and is not empty" in again.stderr


@pytest.mark.parametrize("args, message", [
    (["--executor", "slurm"], "--executor runs shards: give --shards N too"),
    (["--shards", "2", "--shard", "1/2", "-o", "x"], "--shards N runs every shard; --shard K/N runs one"),
    (["--shards", "2"], "--shards needs -o DIR"),
    (["--shards", "2", "--executor", "pbs", "-o", "x"], "--executor 'pbs': expected one of local, slurm, ray, k8s"),
    (["--shards", "2", "--executor", "slurm", "--sbatch", "qos", "-o", "x"], "--sbatch 'qos': expected KEY=VALUE"),
    (["--shards", "2", "--executor", "ray", "--no-wait", "-o", "x"], "--no-wait works with --executor slurm"),
])
def test_bad_executor_flags_are_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", DATA, "--model", "scripted:first", "--no-history", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.shards").exists()


def test_a_plan_of_another_run_is_refused(tmp_path: Path) -> None:
    spec = RunSpec.model_validate({"dataset": {"name": DATA}, "model": {"spec": "scripted:first"}})
    plan = new_plan(spec, Settings(shards=2), tmp_path / "out", None, True, [])
    plan.save()
    assert new_plan(spec, Settings(shards=2, retries=3), tmp_path / "out", None, True, []).settings.retries == 3
    other = spec.model_copy(update={"epochs": 2})
    with pytest.raises(Exception, match="holds the shards of another run"):
        new_plan(other, Settings(shards=2), tmp_path / "out", None, True, [])
    with pytest.raises(Exception, match="holds the shards of another run"):
        new_plan(spec, Settings(shards=3), tmp_path / "out", None, True, [])


def test_the_same_command_while_its_shards_still_run_is_refused_then_merge_finishes(tmp_path: Path) -> None:
    args = ("run", DATA, "--model", "scripted:random,delay=0.3", "--shards", "2", "-o", str(tmp_path / "out"),
            "--store", str(tmp_path / "s.db"))
    assert run_proctor(*args, "--no-wait", cwd=tmp_path).returncode == 0
    again = run_proctor(*args, cwd=tmp_path)
    assert again.returncode == 2 and "still" in again.stderr and "proctor status" in again.stderr
    wait_for(lambda: "shards 2/2 done" in run_proctor("status", str(tmp_path / "out"), cwd=tmp_path).stdout, 60,
             "the shards")
    merged = run_proctor("merge", str(tmp_path / "out"), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert len(read_run(tmp_path / "out")[1]) == 16


def test_a_second_submitter_of_the_run_is_refused_naming_the_first_and_fails_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    argv = ["run", DATA, "--model", "scripted:first", "--no-history", "--shards", "2", "-o", str(out),
            "--store", str(tmp_path / "s.db")]
    with hold_submitter(tmp_path / "out.shards", out, "plan.json"):  # the first submitter, still at work
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert "being submitted by another proctor" in err and len(err.strip().splitlines()) == 1, err
    assert f"pid {os.getpid()} on {socket.gethostname()}, started 20" in err and f"proctor status {out}" in err
    assert not (tmp_path / "out.shards" / "plan.json").exists() and not out.exists()
    assert main([*argv, "--no-wait"]) == 0  # the first gone, the run goes through
    wait_for(lambda: "shards 2/2 done" in run_proctor("status", str(out), cwd=tmp_path).stdout, 60, "the shards")
    capsys.readouterr()
    with hold_submitter(tmp_path / "out.shards", out, "plan.json"):  # nor does a merge go beside a submitter
        assert main(["merge", str(out), "--no-history"]) == 2
    assert "being submitted by another proctor" in capsys.readouterr().err and not out.exists()
    assert main(["merge", str(out), "--no-history"]) == 0
    assert len(read_run(out)[1]) == 16


@pytest.mark.long
def test_two_submitters_at_the_same_instant_give_one_run_and_one_clear_refusal(tmp_path: Path) -> None:
    args = proctor_cmd("run", DATA, "--model", "scripted:random,delay=0.2", "--shards", "2", "-o",
                       str(tmp_path / "out"), "--store", str(tmp_path / "s.db"))
    runs = [subprocess.Popen(args, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    ended = [(run.returncode, err) for run in runs for _, err in [run.communicate(timeout=180)]]
    assert sorted(rc for rc, _ in ended) == [0, 2], ended
    refused = next(err for rc, err in ended if rc == 2)
    first = next(run.pid for run, (rc, _) in zip(runs, ended) if rc == 0)
    assert f"being submitted by another proctor (pid {first} on" in refused, refused
    assert "failed" not in refused and "Traceback" not in refused
    shown = run_proctor("status", str(tmp_path / "out"), cwd=tmp_path).stdout
    assert "shards 2/2 done · 0 running · 0 queued · 0 failed" in shown, shown
    plan = json.loads((tmp_path / "out.shards" / "plan.json").read_text())
    assert [len(a) for a in plan["attempts"].values()] == [1, 1]  # each shard run once
    assert len(read_run(tmp_path / "out")[1]) == 16
