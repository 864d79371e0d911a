"""`proctor plan` and `proctor gate` on scripted runs: the sample size, and GO / NO-GO / INCONCLUSIVE with exit
codes 0 / 1 / 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_runs import binary, write_run  # tests/ is on sys.path (tests/conftest.py's directory)

from proctor.cli import main
from proctor.stats.power import items_needed, min_detectable

N = 400


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_sizes_a_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "plan", "--delta", "2", "--accuracy", "70", "--discordance", "15", "--items",
                        "1000", "--json")
    got = json.loads(out)
    assert code == 0 and got["items_needed"] == items_needed(0.02, 0.15) and got["enough"] is False
    assert got["dataset_mde"] == pytest.approx(min_detectable(1000, 0.15))
    code, out, _ = _cli(capsys, "plan", "--delta", "2", "--accuracy", "70")
    assert code == 0 and "independent errors: an upper bound" in out
    code, out, _ = _cli(capsys, "plan", "--delta", "5", "--accuracy", "70", "--discordance", "20", "--dataset",
                        "mmlu-pro")
    assert code == 0 and "mmlu-pro has 12,032 items: enough" in out


def test_plan_offline_uses_the_size_a_spec_declares(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A spec benchmark whose data cannot be fetched counts its declared `metadata.size`; without one, refused
    (#51 item 6)."""
    from proctor.benchmarks.spec import read_spec
    from proctor.benchmarks.spec_task import find_spec

    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    args = ("plan", "--delta", "5", "--accuracy", "70", "--discordance", "20", "--json", "--dataset")
    code, out, err = _cli(capsys, *args, "arc-challenge")
    assert code == 0 and json.loads(out)["dataset_items"] == 1172, err
    assert "cannot be fetched" in err and "declares, 1,172" in err
    shipped = find_spec("arc-challenge")
    assert shipped is not None and read_spec(shipped).metadata["size"] == 1172
    undeclared = tmp_path / "arc_nosize.yaml"
    undeclared.write_text(shipped.read_text().replace("  size: 1172\n", "").replace("name: arc-challenge",
                                                                                   "name: arc-nosize"))
    code, out, err = _cli(capsys, *args, str(undeclared))
    assert code == 2 and "hub access is disabled" in err and "Traceback" not in err


def test_plan_takes_the_discordance_from_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path, "run-a", "hf:a", binary(N, range(200)))
    b = write_run(tmp_path, "run-b", "hf:b", binary(N, range(40, 220)))  # 40 + 20 items differ: 15%
    code, out, _ = _cli(capsys, "plan", "--delta", "3", "--run", str(a), "--run", str(b), "--json",
                        "--store", str(tmp_path / "none.sqlite"))
    got = json.loads(out)
    assert code == 0 and got["discordance"] == pytest.approx(60 / N) and got["accuracy"] == pytest.approx(0.475)
    assert got["discordance_from"].startswith("runs run-a and run-b, 400 shared items")


@pytest.mark.parametrize("argv", [["--delta", "2"], ["--delta", "30", "--accuracy", "70", "--discordance", "10"],
                                  ["--delta", "2", "--accuracy", "170"], ["--delta", "2", "--run", "x"]])
def test_plan_refuses_bad_input_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "plan", *argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    """A baseline right on items 0–299 of 400; candidates that drop 0, 10 and about 2 points."""
    return {
        "base": write_run(tmp_path, "base", "hf:base", binary(N, range(300))),
        "same": write_run(tmp_path, "same", "hf:same", binary(N, range(300))),
        "worse": write_run(tmp_path, "worse", "hf:worse", binary(N, range(260))),
        "slight": write_run(tmp_path, "slight", "hf:slight", binary(N, set(range(292)) | {350})),
    }


@pytest.mark.parametrize(("candidate", "max_drop", "code", "word"), [
    ("same", "2", 0, "GO"), ("worse", "2", 1, "NO-GO"), ("slight", "2", 3, "INCONCLUSIVE"),
    ("slight", "6", 0, "GO")])
def test_gate_decides_with_the_interval_and_exit_code(runs: dict[str, Path], candidate: str, max_drop: str,
                                                      code: int, word: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    got, out, _ = _cli(capsys, "gate", str(runs[candidate]), "--baseline", str(runs["base"]), "--max-drop",
                       max_drop, "--store", str(tmp_path / "none.sqlite"))
    assert got == code and out.startswith(f"{word}: overall: candidate − baseline")
    assert "95% interval [" in out and f"allowed drop −{float(max_drop):.1f}" in out


def test_gate_per_category_is_bonferroni_and_can_fail_on_one_category(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # items alternate math/law (history_runs): the candidate loses 40 math items and gains 40 law items
    base = write_run(tmp_path, "base", "hf:base", binary(N, set(range(0, 400, 2))))
    cand = write_run(tmp_path, "cand", "hf:cand", binary(N, set(range(80, 400, 2)) | set(range(1, 81, 2))))
    got, out, _ = _cli(capsys, "gate", str(cand), "--baseline", str(base), "--max-drop", "8", "--json",
                       "--store", str(tmp_path / "none.sqlite"))
    overall = json.loads(out)
    assert got == 0 and overall["decision"] == "GO" and len(overall["checks"]) == 1
    got, out, _ = _cli(capsys, "gate", str(cand), "--baseline", str(base), "--max-drop", "8", "--per-category",
                       "--json", "--store", str(tmp_path / "none.sqlite"))
    result = json.loads(out)
    assert got == 1 and result["decision"] == "NO-GO" and result["deciding"]["group"] == "math"
    assert [c["level"] for c in result["checks"]] == pytest.approx([0.95, 0.975, 0.975])


def test_gate_refuses_what_the_rule_sets_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_run(tmp_path, "base", "hf:base", binary(N, range(300)))
    lp = write_run(tmp_path, "lp", "hf:lp", binary(N, range(300)), mode="logprob")
    got, _, err = _cli(capsys, "gate", str(lp), "--baseline", str(base), "--max-drop", "1",
                       "--store", str(tmp_path / "none.sqlite"))
    assert got == 2 and "different settings" in err
    got, _, err = _cli(capsys, "gate", str(lp), "--baseline", str(base), "--max-drop", "150")
    assert got == 2 and "--max-drop" in err


def test_plan_refuses_fractions_given_for_points_and_percent(capsys: pytest.CaptureFixture[str]) -> None:
    """`--delta 0.02 --accuracy 0.7` read as 0.02 points near 0.7% asked for 2,727,880 items, silently."""
    assert main(["plan", "--delta", "0.02", "--accuracy", "0.7"]) == 2
    assert "write --accuracy 70 --delta 2" in capsys.readouterr().err


def test_plan_with_items_says_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--delta", "2", "--accuracy", "70", "--items", "30"]) == 0
    out = capsys.readouterr().out
    assert "\n30 items: not enough (they detect" in out and "has 30 items" not in out


def test_gate_of_a_run_against_itself_warns(runs: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    got, out, err = _cli(capsys, "gate", str(runs["base"]), "--baseline", str(runs["base"]), "--max-drop", "2",
                         "--store", str(tmp_path / "none.sqlite"))
    assert got == 0 and out.startswith("GO")
    assert "both arguments are the same run: a gate of a run against itself decides nothing" in err
