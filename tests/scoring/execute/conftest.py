"""The real bubblewrap: these tests run it (CI installs it, `.ci/run`); elsewhere without it they skip, and under
CI=true its absence fails."""

from __future__ import annotations

import os

import pytest

from proctor.scoring.execute.sandbox import Bubblewrap, find_bubblewrap


@pytest.fixture(scope="session")
def bwrap() -> Bubblewrap:
    box = find_bubblewrap()
    if box is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("bubblewrap is not available under CI=true (.ci/run installs it)")
        pytest.skip("bubblewrap is not available (apt-get install -y bubblewrap)")
    return box
