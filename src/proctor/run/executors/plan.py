"""The shared state of one executor run: `OUT.shards/`, beside the run directory `-o OUT` the shards merge into.

    OUT.shards/plan.json            the spec (what to run), the shard count, the store, the executor and its settings,
                                    and each shard's attempts (job ids)
    OUT.shards/shard-K-of-N/        shard K's run directory (`--shard K/N`, same run id as the whole run)
    OUT.shards/logs/shard-K-of-N.log   what shard K printed, every attempt appended
    OUT.shards/status/shard-K.json  shard K's latest attempt: started (pid, host) and, once over, its exit status

plan.json never holds a secret: a base URL with one (user info, a query value, a `;param`) is written redacted, and the
URLs as given travel to the shards in `$PROCTOR_PLAN_SECRETS`, set by the submitting proctor and never in a file an
engine writes: local processes inherit it; a Ray task gets it as an argument (not in Ray's runtime env, which Ray
logs); a Slurm job reads it from `OUT.shards/secrets.json` (mode 0600, removed once the shards are merged or the
submitter stops), since sbatch would store the submitter's environment in Slurm's state; a k8s Job reads it from a
Secret. The command line is written redacted.

A shard is done when its status file says an attempt ended with 0: final (a late job leaves it be, see worker). The status files are written by the
shard itself, whichever engine ran it, so the submitting side needs from the engine only whether a job is alive.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core.spec import RunSpec, ShardSpec
from ...util.errors import ProctorError
from ...util.redact import MASK, redact, redact_url
from ...util.textio import read_json_record, write_json_atomic
from ..shard import Shard

PLAN = "plan.json"
SECRETS_FILE = "secrets.json"  # Slurm's channel for $PROCTOR_PLAN_SECRETS: this user's only (mode 0600)
SECRETS_ENV = "PROCTOR_PLAN_SECRETS"  # the base URLs plan.json holds redacted, as given (a JSON list, in spec order)


def hide_secrets(data: Any, found: list[str]) -> Any:
    """The spec as JSON with every base URL that carries a secret redacted; each URL as given appended to `found`."""
    if isinstance(data, str) and data.startswith(("http://", "https://")) and redact_url(data) != data:
        found.append(data)
        return redact_url(data)
    if isinstance(data, dict):
        return {k: hide_secrets(v, found) for k, v in data.items()}
    if isinstance(data, list):
        return [hide_secrets(v, found) for v in data]
    return data


def has_secrets(data: Any) -> bool:
    """The spec as JSON holds a base URL with a secret (as given, or already redacted: from plan.json)."""
    found: list[str] = []
    hide_secrets(data, found)
    return bool(found) or MASK in json.dumps(data)


def _restore(data: Any, given: list[str], where: Path) -> Any:
    """`hide_secrets` undone from the URLs as given (in the same order); a redacted URL none restores is refused."""
    if isinstance(data, str) and data.startswith(("http://", "https://")) and MASK in data:
        if not given or redact_url(given[0]) != data:
            raise ProctorError(f"{where}: the base URL {data} carries a secret plan.json does not hold, and "
                               f"${SECRETS_ENV} does not give it: run the shard with the submitting proctor's "
                               "environment (a k8s Job: the Secret its job.yaml names)")
        return given.pop(0)
    if isinstance(data, dict):
        return {k: _restore(v, given, where) for k, v in data.items()}
    if isinstance(data, list):
        return [_restore(v, given, where) for v in data]
    return data
EXECUTORS = ("local", "slurm", "ray")


def plan_dir_of(out: Path) -> Path:
    """Where the shards of the run merged into `out` live: `OUT.shards` beside it."""
    return out.parent / (out.name + ".shards")


@dataclass
class Settings:
    """How the shards are run (never part of the run id): the engine and its requests."""

    executor: str = "local"
    shards: int = 1
    retries: int = 1
    partition: str | None = None  # slurm
    time_min: int = 60  # slurm: minutes per shard
    gpus_per_task: int = 0  # slurm and ray
    cpus_per_task: int = 1
    account: str | None = None  # slurm
    sbatch: dict[str, str] = field(default_factory=dict)  # slurm: extra `#SBATCH --KEY=VALUE` lines
    poll_s: float = 1.0


@dataclass
class Plan:
    """plan.json: what to run and how, and every attempt so far."""

    path: Path  # the OUT.shards directory
    out: Path  # the merged run directory
    spec: dict[str, Any]  # the RunSpec, as JSON
    settings: Settings
    store: str | None
    use_cache: bool
    command: list[str]
    cwd: str  # where relative data paths in the spec are read from
    attempts: dict[str, list[str]] = field(default_factory=dict)  # shard index → its job ids, oldest first

    @property
    def count(self) -> int:
        return self.settings.shards

    def shard_spec(self, index: int) -> RunSpec:
        """The run's spec, restricted to shard `index` of `count` (its base URLs as given, from the environment)."""
        try:
            given = [str(u) for u in json.loads(os.environ.get(SECRETS_ENV) or self._secrets_file() or "[]")]
        except (ValueError, TypeError):
            given = []
        spec = RunSpec.model_validate(_restore(self.spec, given, self.path / PLAN))
        return spec.model_copy(update={"shard": ShardSpec(index=index, count=self.count)})

    def _secrets_file(self) -> str | None:
        try:
            return (self.path / SECRETS_FILE).read_text(encoding="utf-8")
        except OSError:
            return None

    def write_secrets(self) -> None:
        """`$PROCTOR_PLAN_SECRETS` into OUT.shards/secrets.json, readable by this user only (none: no file)."""
        path = self.path / SECRETS_FILE
        given = os.environ.get(SECRETS_ENV)
        if not given:
            path.unlink(missing_ok=True)
            return
        tmp = path.with_name(f".{SECRETS_FILE}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(fd, 0o600)  # whatever the umask, and an earlier file's mode
            f.write(given)
        os.replace(tmp, path)

    def drop_secrets(self) -> None:
        """Remove OUT.shards/secrets.json (the shards are merged, or no job of this submitter is left)."""
        (self.path / SECRETS_FILE).unlink(missing_ok=True)

    def shard_dir(self, index: int) -> Path:
        return self.path / Shard(index, self.count).suffix

    def log_path(self, index: int) -> Path:
        return self.path / "logs" / f"{Shard(index, self.count).suffix}.log"

    def status_path(self, index: int) -> Path:
        return self.path / "status" / f"shard-{index}.json"

    def attempt(self, index: int) -> int:
        """The current attempt's number (1 for the first), 0 before any."""
        return len(self.attempts.get(str(index), []))

    def save(self) -> None:
        """Write plan.json, secrets redacted; the URLs as given go to `$PROCTOR_PLAN_SECRETS`, which the shards this
        process starts inherit."""
        found: list[str] = []
        spec = hide_secrets(self.spec, found)
        if found:
            os.environ[SECRETS_ENV] = json.dumps(found)
        else:
            os.environ.pop(SECRETS_ENV, None)
        data = {"out": str(self.out), "spec": spec, "settings": asdict(self.settings), "store": self.store,
                "use_cache": self.use_cache, "command": redact(self.command), "cwd": self.cwd,
                "attempts": self.attempts}
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path / PLAN, data)


@contextmanager
def without_secrets() -> Iterator[None]:
    """`$PROCTOR_PLAN_SECRETS` out of this process's environment while the block runs (an engine's daemons, sbatch)."""
    secrets = os.environ.pop(SECRETS_ENV, None)
    try:
        yield
    finally:
        if secrets is not None:
            os.environ[SECRETS_ENV] = secrets


def read_plan(path: Path) -> Plan:
    """The plan in the OUT.shards directory `path`; a clear error when there is none."""
    file = path / PLAN
    if not file.is_file():
        raise ProctorError(f"{path}: no {PLAN} (not the shards of a `proctor run --executor …` run)")
    data = read_json_record(file)
    try:
        return Plan(path=path, out=Path(data["out"]), spec=dict(data["spec"]), settings=Settings(**data["settings"]),
                    store=data["store"], use_cache=bool(data["use_cache"]), command=list(data["command"]), cwd=str(data["cwd"]),
                    attempts={str(k): [str(j) for j in v] for k, v in data["attempts"].items()})
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ProctorError(f"{file}: unreadable plan ({e})") from None


def write_status(plan: Plan, index: int, attempt: int, rc: int | None) -> None:
    """Shard `index`'s status file: `rc` None when it starts, its exit status when it ends."""
    data = {"attempt": attempt, "rc": rc, "pid": os.getpid(), "host": socket.gethostname(), "time": time.time()}
    plan.status_path(index).parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(plan.status_path(index), data)


def read_status(plan: Plan, index: int) -> dict[str, Any] | None:
    """Shard `index`'s status for its current attempt (None: that attempt has not started), or its finished one: a
    shard that ended with 0 is done for good, whichever attempt finished it (the worker never runs it again)."""
    try:
        data = read_json_record(plan.status_path(index))
    except (OSError, ValueError, ProctorError):
        return None
    if not isinstance(data, dict):
        return None
    if data.get("rc") != 0 and data.get("attempt") != plan.attempt(index):
        return None
    return data


def worker_command(plan: Plan, index: int) -> list[str]:
    """The command that runs the next attempt of shard `index`, whatever the engine: proctor.run.executors.worker."""
    return [sys.executable, "-m", "proctor.run.executors.worker", str(plan.path), str(index), str(plan.attempt(index) + 1)]


def source_root() -> str:
    """The directory this proctor is imported from: shards run the same code as the command that submits them."""
    return str(Path(__file__).resolve().parents[3])  # …/src of …/src/proctor/run/executors/plan.py


def child_env() -> dict[str, str]:
    """This process's environment, with proctor's own source first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root(), env.get("PYTHONPATH", "")) if p)
    return env


def new_plan(spec: RunSpec, settings: Settings, out: Path, store: Path | None, use_cache: bool,
             command: list[str]) -> Plan:
    """The plan of a new executor run into `out` (refused when `out` or its shards hold another run)."""
    if settings.shards < 1:
        raise ProctorError("--shards must be at least 1")
    if spec.shard is not None:
        raise ProctorError("--shards N runs every shard; --shard K/N runs one: give one of them")
    out = out.absolute()
    path = plan_dir_of(out)
    data = spec.model_dump(mode="json")
    if (path / "plan.json").is_file():
        old = read_plan(path)
        if old.spec != hide_secrets(data, []) or old.count != settings.shards:
            raise ProctorError(f"{path} holds the shards of another run (spec or --shards differ); choose another -o")
        old.settings, old.spec = settings, data
        return old  # the same run again: finished shards are kept, the rest resume
    if out.exists() and any(out.iterdir()):
        raise ProctorError(f"{out} exists and is not empty; choose another -o directory")
    return Plan(path=path, out=out, spec=data, settings=settings, store=str(store) if store else None,
                use_cache=use_cache, command=command, cwd=str(Path.cwd()))
