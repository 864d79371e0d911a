"""`--executor slurm` against the machine's real Slurm: the shards go through a job array (Slurm's own job ids,
`scontrol` knows them), a shard cancelled mid-way with `scancel` is retried, and the merged run equals the
unsharded one; with no retries left the run stops naming the shard and merges nothing; `--no-wait` hands the
job ids back and `proctor status` / `proctor merge` finish later."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.core.spec import RunSpec
from proctor.run.executors import Settings, _watch, attempt_logs, new_plan
from proctor.run.executors.slurm import job_folder
from proctor.util.errors import ProctorError

from .conftest import DATA, assert_same_run, env, proctor_cmd, read_run, run_proctor, wait_for

pytestmark = pytest.mark.xdist_group("engines")
real = pytest.mark.usefixtures("slurm")  # the tests that submit to the machine's Slurm
SLOW = "scripted:random,delay=0.4"  # one answer each 0.4 s, each kept as it comes: a shard takes seconds


def job_state(job: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, check=True).stdout
    return out.split("JobState=", 1)[1].split()[0]


def plan_of(out: Path) -> dict:
    return json.loads((out.parent / (out.name + ".shards") / "plan.json").read_text())


def start_and_cancel(tmp_path: Path, retries: int) -> tuple[subprocess.Popen[str], str, Path]:
    """Start a 3-shard Slurm run; once shard 1 has answered once, `scancel` its job. The run, the job, -o."""
    out = tmp_path / "out"
    run = subprocess.Popen(proctor_cmd("run", DATA, "--model", SLOW, "--shards", "3", "--executor", "slurm",
                                       "--retries", str(retries), "-o", str(out), "--store", str(tmp_path / "s.db")),
                           cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shard1 = tmp_path / "out.shards" / "shard-1-of-3" / "samples.jsonl"
    wait_for(lambda: shard1.is_file() and shard1.read_text().count("\n") >= 1, 120, "shard 1's first answer")
    job = plan_of(out)["attempts"]["1"][0]
    subprocess.run(["scancel", job], check=True)
    return run, job, out


@real
def test_three_shards_through_slurm_with_a_cancelled_shard_retried_equal_the_unsharded_run(tmp_path: Path) -> None:
    run, cancelled, out = start_and_cancel(tmp_path, retries=1)
    plain = run_proctor("run", DATA, "--model", SLOW, "-o", str(tmp_path / "plain"), "--no-history",
                        "--store", str(tmp_path / "plain.db"), cwd=tmp_path)  # meanwhile, the unsharded run
    assert plain.returncode == 0, plain.stderr
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    assert f"retrying shard 1/3 (job {cancelled} failed)" in stderr
    attempts = plan_of(out)["attempts"]
    assert len(attempts["1"]) == 2 and len(attempts["2"]) == len(attempts["3"]) == 1
    assert job_state(cancelled) == "CANCELLED"  # the jobs went through Slurm: it knows them and how they ended
    assert [job_state(a[-1]) for a in attempts.values()] == ["COMPLETED"] * 3
    assert all("_" in a[0] for a in attempts.values())  # array tasks
    assert_same_run(out, tmp_path / "plain")
    log = (tmp_path / "out.shards" / "logs" / "shard-1-of-3.log").read_text()
    assert "attempt 1, pid" in log and "attempt 2: exit 0" in log  # both attempts' output kept
    first = tmp_path / "out.shards" / "slurm" / cancelled / f"{cancelled}_0_log.err"
    assert "CANCELLED" in first.read_text()  # and Slurm's own word on attempt 1, in its job's folder
    shown = run_proctor("status", str(out), cwd=tmp_path).stdout
    assert f"attempt 1 {first.parent}" in shown and f"attempt 2 {first.parent.parent / attempts['1'][1]}" in shown
    assert "multiple-choice: accuracy" in stdout


@real
def test_a_cancelled_shard_with_no_retries_left_stops_the_run_and_nothing_is_merged(tmp_path: Path) -> None:
    run, cancelled, out = start_and_cancel(tmp_path, retries=0)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 2
    assert f"shard(s) 1/3 (job {cancelled}" in stderr and "nothing merged" in stderr
    assert f"attempt 1 {tmp_path / 'out.shards' / 'slurm' / cancelled}" in " ".join(stderr.split())
    assert not out.exists()


@real
def test_no_wait_returns_the_job_ids_and_status_then_merge_finish(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sub = run_proctor("run", DATA, "--model", "scripted:random", "--shards", "3", "--executor", "slurm",
                      "--no-wait", "-o", str(out), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert sub.returncode == 0, sub.stderr
    jobs = [a[0] for a in plan_of(out)["attempts"].values()]
    assert " ".join(jobs) in sub.stderr and f"proctor status {out}" in sub.stdout
    assert not out.exists()

    def all_done() -> str | None:
        shown = run_proctor("status", str(out), cwd=tmp_path)
        return shown.stdout if "shards 3/3 done" in shown.stdout else None

    assert "proctor merge" in wait_for(all_done, 120, "the three jobs")
    merged = run_proctor("merge", str(out), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    plain = run_proctor("run", DATA, "--model", "scripted:random", "-o", str(tmp_path / "plain"), "--no-history",
                        "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert_same_run(out, tmp_path / "plain")


def test_each_attempt_s_log_is_named_the_shard_log_and_every_slurm_job_folder(tmp_path: Path) -> None:
    """A retried shard's attempts each keep their output: the shard's log holds them all (a header each), and on
    Slurm each attempt is a job with its own folder (submitit's and Slurm's messages), every one named; the
    run that is out of retries names them too."""
    spec = RunSpec.model_validate({"dataset": {"name": DATA}, "model": {"spec": "scripted:first"}})
    plan = new_plan(spec, Settings(shards=2, executor="slurm", retries=1), tmp_path / "out", None, True, [])
    plan.attempts = {"1": ["33_0", "36"], "2": ["33_1"]}
    shards = tmp_path / "out.shards"
    assert attempt_logs(plan, 1) == (f"log {shards / 'logs' / 'shard-1-of-2.log'}; Slurm's own: attempt 1 "
                                     f"{shards / 'slurm' / '33_0'}, attempt 2 {shards / 'slurm' / '36'}")
    assert attempt_logs(plan, 2).endswith(f"attempt 1 {shards / 'slurm' / '33_1'}")
    assert job_folder(plan, "36") == shards / "slurm" / "36"
    local = new_plan(spec, Settings(shards=2), tmp_path / "loc", None, True, [])
    local.attempts = {"1": ["pid:1", "pid:2"]}
    assert attempt_logs(local, 1) == f"log {tmp_path / 'loc.shards' / 'logs' / 'shard-1-of-2.log'}"

    class Spent:  # an engine whose every attempt failed: the run stops, naming where each attempt's log is
        name = "slurm"

        def alive(self, jobs: dict[int, str]) -> dict[int, bool]:
            return dict.fromkeys(jobs, False)

        def cancel(self, job: str) -> None: ...

    with pytest.raises(ProctorError) as err:
        _watch(plan, Spent(), lambda line: None)  # type: ignore[arg-type]
    assert f"1/2 (job 36, {attempt_logs(plan, 1)})" in str(err.value)


@pytest.mark.parametrize("executor, module, message", [
    ("slurm", "submitit", "--executor slurm needs submitit: pip install"),
    ("ray", "ray", "--executor ray needs ray: pip install"),
])
def test_a_missing_engine_library_is_one_line_before_anything_is_written(
        executor: str, module: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without submitit (or ray) the run is refused in one line, exit 2, and leaves no OUT.shards behind."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # `import submitit` raises ImportError
    monkeypatch.setitem(sys.modules, module + ".helpers", None)
    monkeypatch.chdir(tmp_path)
    code = main(["run", DATA, "--model", "scripted:first", "--no-history", "--shards", "2", "--executor", executor,
                 "-o", str(tmp_path / "out"), "--store", str(tmp_path / "s.db")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out.shards").exists() and not (tmp_path / "out").exists()


def job_field(job: str, name: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, check=True).stdout
    return out.split(f"{name}=", 1)[1].split()[0]


@real
@pytest.mark.long
def test_a_node_going_down_reruns_each_shard_once_and_leaves_the_finished_status_alone(tmp_path: Path) -> None:
    """The node goes down while both shards run: Slurm requeues nothing (`--no-requeue`), proctor resubmits each
    shard once, the run merges, and no late job changes a status afterwards."""
    out = tmp_path / "out"
    run = subprocess.Popen(proctor_cmd("run", DATA, "--model", SLOW, "--shards", "2", "--executor", "slurm",
                                       "--retries", "1", "-o", str(out), "--store", str(tmp_path / "s.db")),
                           cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shards = tmp_path / "out.shards"
    answered = [shards / f"shard-{k}-of-2" / "samples.jsonl" for k in (1, 2)]
    wait_for(lambda: all(p.is_file() and p.read_text().count("\n") >= 1 for p in answered), 120, "both shards")
    node = subprocess.run(["sinfo", "-h", "-o", "%N"], capture_output=True, text=True, check=True).stdout.strip()
    first = [a[0] for a in plan_of(out)["attempts"].values()]
    try:
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=down", "reason=proctor-test"], check=True)
        wait_for(lambda: all(job_state(j) == "NODE_FAIL" for j in first), 60, "the jobs to fail with the node")
    except BaseException:
        run.kill()
        subprocess.run(["scancel", *(j.split("_")[0] for j in first)], check=False)
        raise
    finally:
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], check=False, capture_output=True)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    assert [job_field(j, "Restarts") for j in first] == ["0", "0"]  # never requeued by Slurm
    attempts = plan_of(out)["attempts"]
    assert [len(a) for a in attempts.values()] == [2, 2]
    statuses = {p.name: p.read_bytes() for p in (shards / "status").glob("*.json")}
    jobs = {a for tried in attempts.values() for a in tried}
    wait_for(lambda: not jobs & set(subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True,
                                                   check=True).stdout.split()), 60, "the run's jobs to leave the queue")
    assert {p.name: p.read_bytes() for p in (shards / "status").glob("*.json")} == statuses
    assert "shards 2/2 done" in run_proctor("status", str(out), cwd=tmp_path).stdout
    for k in (1, 2):  # each shard started twice at most: the lost attempt and its resubmission
        assert (shards / "logs" / f"shard-{k}-of-2.log").read_text().count(", pid ") <= 2


def slurm_files(job: str) -> list[Path]:
    """The files Slurm keeps of job `job`: its script and environment in the controller's state, slurmd's spool,
    and the logs."""
    config = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, check=True).stdout
    found = {k.strip(): v.strip() for k, _, v in (line.partition(" = ") for line in config.splitlines())}
    state = Path(found["StateSaveLocation"])
    places = [*state.glob(f"hash.*/job.{job}"), Path(found["SlurmdSpoolDir"])]
    places += [Path(found[n]) for n in ("SlurmctldLogFile", "SlurmdLogFile") if found.get(n, "").startswith("/")]
    return [p for d in places for p in ([d] if d.is_file() else d.rglob("*")) if p.is_file()]


@real
def test_no_secret_of_the_base_url_in_any_file_slurm_or_the_shards_write(tmp_path: Path) -> None:
    """A base URL with a password and a token through Slurm: neither secret is in Slurm's files while the jobs
    wait (each job's stored script and environment) nor, once the shards have reached the server with the URL and
    merged, in the run's files."""
    from proctor.testing.server import serve

    secrets = ("Pw0Secret55", "Tok0Secret33")

    def scan(paths: list[Path]) -> int:
        files = [p for p in paths if p.is_file() and not p.is_symlink()]
        for path in files:
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, f"{path} holds {secret}"
        return len(files)

    out = tmp_path / "out"
    with serve() as server:
        url = f"http://user:{secrets[0]}@{server.url.removeprefix('http://')}/v1?token={secrets[1]}"
        sub = run_proctor("run", DATA, "--model", "openai:m", "--base-url", url, "--shards", "2", "--executor",
                          "slurm", "--sbatch", "begin=now+600", "--no-wait", "-o", str(out), "--store",
                          str(tmp_path / "s.db"), cwd=tmp_path, extra_env={"OPENAI_API_KEY": "k-unused-123456"})
        assert sub.returncode == 0, sub.stderr
        array = plan_of(out)["attempts"]["1"][0].split("_")[0]
        try:
            kept = slurm_files(array)
            assert any(p.name == "environment" for p in kept), f"Slurm keeps no environment of job {array}"
            scan(kept)
        except BaseException:
            subprocess.run(["scancel", array], check=False)
            raise
        subprocess.run(["scontrol", "update", f"jobid={array}", "starttime=now"], check=True)

        def all_done() -> bool:
            return "shards 2/2 done" in run_proctor("status", str(out), cwd=tmp_path).stdout

        wait_for(all_done, 120, "the two jobs")
    merged = run_proctor("merge", str(out), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert read_run(out)[2]["overall"]  # the shards reached the server with the URL as given
    assert scan(list(tmp_path.rglob("*"))) > 10
    assert not any(s in sub.stdout + sub.stderr + merged.stdout + merged.stderr for s in secrets)
