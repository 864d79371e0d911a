"""Issue 11, item 5: with `--epochs K` the interval is over items, and results.json, the leaderboard and the
report show the same one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import AIME

WILSON_0_OF_7 = 0.35433  # Wilson upper bound for 0 successes in 7 trials


@pytest.mark.parametrize("epochs", [1, 4])
def test_zero_of_seven_items_over_epochs(cli: Any, tmp_path: Path, epochs: int) -> None:
    out, store = tmp_path / "run", tmp_path / "s.sqlite"
    res = cli("run", "aime-2025", "--data-file", AIME, "--limit", "7", "--model", "scripted:fixed=no idea",
              "--epochs", str(epochs), "-o", out, "--store", store, "--no-progress")
    assert res.code == 0, res.err
    overall = json.loads((out / "results.json").read_text())["overall"]
    assert overall["n_scored"] == 7 * epochs and overall["accuracy"] == 0.0
    assert overall["ci_low"] == 0.0 and overall["ci_high"] == pytest.approx(WILSON_0_OF_7, abs=1e-5)
    assert overall["ci_method"] == ("wilson" if epochs == 1 else "clustered_wilson")
    assert "[0.000, 0.354]" in res.out  # the summary line says the same
    assert overall["n_items"] == (None if epochs == 1 else 7)
    assert (f"n={7 * epochs} of 7 items (the interval's unit)" in res.out) == (epochs > 1)  # not n=28 alone

    lb = cli("leaderboard", "aime-2025", "--store", store, "--json")
    assert lb.code == 0, lb.err
    [board] = json.loads(lb.out)  # one board per setting; one setting here
    [entry] = board["entries"]
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((overall["ci_low"], overall["ci_high"]))
