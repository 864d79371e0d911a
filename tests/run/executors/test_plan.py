"""The plan's secrets channel for Slurm: `OUT.shards/secrets.json`, this user's only whatever the umask, read by
a shard that did not inherit `$PROCTOR_PLAN_SECRETS`, and removed once no job needs it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from proctor.core.spec import RunSpec
from proctor.run.executors import Settings, new_plan
from proctor.run.executors.plan import SECRETS_ENV, SECRETS_FILE, read_plan, without_secrets

from .conftest import DATA

URL = "http://user:Pw0Secret55@127.0.0.1:9/v1"


def test_the_secrets_file_is_the_users_only_and_gives_a_shard_its_urls(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    spec = RunSpec.model_validate({"dataset": {"name": DATA}, "model": {"spec": "openai:m", "options": {"base_url": URL}}})
    plan = new_plan(spec, Settings(shards=2, executor="slurm"), tmp_path / "out", None, True, [])
    monkeypatch.setenv(SECRETS_ENV, "")
    plan.save()  # sets $PROCTOR_PLAN_SECRETS for the shards
    assert json.loads(os.environ[SECRETS_ENV]) == [URL] and "Pw0Secret55" not in (plan.path / "plan.json").read_text()
    old = os.umask(0)
    try:
        plan.write_secrets()
    finally:
        os.umask(old)
    path = plan.path / SECRETS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and json.loads(path.read_text()) == [URL]
    with without_secrets():  # a Slurm job: no $PROCTOR_PLAN_SECRETS, the file instead
        assert SECRETS_ENV not in os.environ
        assert read_plan(plan.path).shard_spec(1).model.options["base_url"] == URL
    assert SECRETS_ENV in os.environ
    plan.drop_secrets()
    assert not path.exists()
