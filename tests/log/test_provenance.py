"""What every run records about where and when it was made: proctor's commit, the time, the host."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from proctor.log import provenance


def test_git_sha_is_a_commit_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    sha = provenance.git_sha()
    assert sha is None or re.fullmatch(r"[0-9a-f]{40}", sha)
    monkeypatch.setenv("PATH", "")  # no git on PATH: None, never an exception
    assert provenance.git_sha() is None


def test_utc_now_is_iso_seconds_in_utc() -> None:
    stamp = provenance.utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", stamp)
    assert datetime.fromisoformat(stamp).utcoffset() is not None


def test_host_info_names_the_machine_and_nothing_else() -> None:
    info = provenance.host_info()
    assert set(info) == {"hostname", "platform", "python", "cpus"}
    assert isinstance(info["cpus"], int) and info["python"].count(".") == 2
