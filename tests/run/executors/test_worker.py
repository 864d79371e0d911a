"""The shard worker: a shard's finished status is final. A late job (a Slurm requeue, an attempt proctor
superseded) finds its shard finished, or a newer attempt submitted, and exits without touching the shard: its
status, its log and its run directory stay as they were, before and after the merge."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.core.spec import RunSpec
from proctor.run.executors import Settings, finish, new_plan, shard_states
from proctor.run.executors.plan import Plan, read_plan
from proctor.run.executors.worker import run_shard

from .conftest import DATA


def _plan(tmp_path: Path) -> Plan:
    spec = RunSpec.model_validate({"dataset": {"name": DATA}, "model": {"spec": "scripted:first"}})
    plan = new_plan(spec, Settings(shards=2, executor="slurm"), tmp_path / "out", None, True, [])
    plan.attempts = {"1": ["40_0"], "2": ["40_1"]}
    plan.save()
    return plan


def _shard_files(plan: Plan, index: int) -> dict[str, bytes]:
    files = [plan.status_path(index), plan.log_path(index), *sorted(plan.shard_dir(index).rglob("*"))]
    return {str(p): p.read_bytes() for p in files if p.is_file()}


def test_a_late_job_on_a_finished_shard_exits_without_touching_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = _plan(tmp_path)
    assert run_shard(str(plan.path), 1, 1) == 0 and run_shard(str(plan.path), 2, 1) == 0
    before = {k: _shard_files(plan, k) for k in (1, 2)}
    assert run_shard(str(plan.path), 1, 1) == 0  # Slurm requeued the finished job: it runs again
    assert {k: _shard_files(plan, k) for k in (1, 2)} == before
    plan = read_plan(plan.path)
    plan.attempts["2"].append("41")  # proctor resubmitted shard 2 (its job looked lost) after it had finished
    plan.save()
    assert run_shard(str(plan.path), 2, 2) == 0  # the new attempt finds it finished
    assert [s.state for s in shard_states(read_plan(plan.path))] == ["done", "done"]
    finish(plan.out)
    assert run_shard(str(plan.path), 1, 1) == 0 and run_shard(str(plan.path), 2, 2) == 0  # after the merge
    assert {k: _shard_files(plan, k) for k in (1, 2)} == before
    assert [s.state for s in shard_states(read_plan(plan.path))] == ["done", "done"]


def test_a_superseded_attempt_exits_without_touching_the_shard(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = _plan(tmp_path)
    plan.attempts["1"].append("41")  # attempt 1 looked lost and attempt 2 was submitted; then attempt 1 started
    plan.save()
    assert run_shard(str(plan.path), 1, 1) == 0
    assert _shard_files(plan, 1) == {} and not plan.shard_dir(1).exists()
    assert run_shard(str(plan.path), 1, 2) == 0  # the current attempt runs the shard, once
    assert shard_states(read_plan(plan.path))[0].state == "done"
    assert read_plan(plan.path).attempts["1"] == ["40_0", "41"]
