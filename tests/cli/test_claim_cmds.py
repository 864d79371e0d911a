"""`proctor claim`, `run --claim` and `verify --claim` on the command line: the answers' exit codes (0 PASS, 1 FAIL,
3 INCONCLUSIVE, 4 TAMPERED), a run refused under a claim it is not (exit 2, one line), and bad input of every kind
answered in one line with exit 2, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.cli import main

QUIET = ["--no-progress", "--no-history", "--no-cache"]


def _items(tmp_path: Path, n: int = 20, right: int = 16) -> Path:
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "A" if i < right
             else "B", "choices": {"A": "yes", "B": "no"}} for i in range(n)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _claim(items: Path, out: Path, *terms: str) -> list[str]:
    return ["claim", str(items), "--model", "scripted:first", "-o", str(out), *terms]


def _run(items: Path, out: Path, *extra: str) -> list[str]:
    return ["run", str(items), "--model", "scripted:first", "-o", str(out), *QUIET, *extra]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line of a command refused with exit 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("threshold", "code", "answer"), [("50", 0, "PASS"), ("95", 1, "FAIL"),
                                                            ("70", 3, "INCONCLUSIVE")])
def test_verify_exits_by_the_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str], threshold: str, code: int,
                                    answer: str) -> None:
    items, claim, run = _items(tmp_path), tmp_path / "CLAIM.json", tmp_path / "run"
    assert main(_claim(items, claim, "--at-least", threshold)) == 0
    assert "unsigned" in capsys.readouterr().out
    assert main(_run(items, run, "--claim", str(claim))) == 0
    assert json.loads((run / "manifest.json").read_text(encoding="utf-8"))["claim"]["sha256"] == json.loads(
        claim.read_text(encoding="utf-8"))["sha256"]
    capsys.readouterr()
    assert main(["verify", str(run), "--claim", str(claim)]) == code
    said = capsys.readouterr()
    out = said.out.splitlines()
    assert out[-1].startswith(f"{answer}: accuracy 80.0%, 95% interval [58.4, 91.9] vs the threshold")
    assert any(line.startswith("note:") and "unsigned" in line for line in said.err.splitlines())  # notes: stderr
    assert main(["verify", str(run), "--claim", str(claim), "--json"]) == code
    got = json.loads(capsys.readouterr().out)
    assert got["answer"] == answer and got["claim"]["threshold"] == pytest.approx(float(threshold) / 100)


def test_tampered_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items, claim, run = _items(tmp_path), tmp_path / "CLAIM.json", tmp_path / "run"
    assert main(_run(items, run)) == 0
    assert main(_claim(items, claim, "--at-least", "50")) == 0  # after the run
    capsys.readouterr()
    assert main(["verify", str(run), "--claim", str(claim)]) == 4
    assert capsys.readouterr().out.splitlines()[-1].startswith("TAMPERED: claim: written ")


def test_a_run_unlike_its_claim_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items, claim = _items(tmp_path), tmp_path / "CLAIM.json"
    assert main(_claim(items, claim, "--at-least", "50")) == 0
    line = _refused(_run(items, tmp_path / "a", "--claim", str(claim), "--epochs", "2"), capsys)
    assert line.startswith(f"error: {claim}: this run's id is ") and "settings differ" in line
    assert not (tmp_path / "a").exists()
    assert _refused(["run", str(items), "--model", "scripted:random", "-o", str(tmp_path / "b"), "--claim",
                     str(claim), *QUIET], capsys).startswith(f"error: {claim}: this run's id is ")
    (tmp_path / "x").mkdir()
    other = _items(tmp_path / "x", 20, 15)
    assert "--claim: not with --shards" in _refused(_run(items, tmp_path / "c", "--claim", str(claim), "--shards",
                                                         "2"), capsys)
    items.write_text(items.read_text(encoding="utf-8").replace("Question 3?", "Question three?"), encoding="utf-8")
    line = _refused(_run(items, tmp_path / "d", "--claim", str(claim)), capsys)
    assert line.startswith(f"error: {claim}: the data has content hash ") and "data changed" in line
    assert _refused(["run", str(items), str(other), "--model", "scripted:first", "--claim", str(claim), *QUIET],
                    capsys).endswith("give one DATASET")


def test_a_run_begun_without_the_claim_is_not_resumed_under_it(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    items, claim, run = _items(tmp_path), tmp_path / "CLAIM.json", tmp_path / "run"
    assert main(_run(items, run, "--limit", "20")) == 0
    assert main(_claim(items, claim, "--at-least", "50", "--limit", "20")) == 0
    line = _refused(_run(items, run, "--claim", str(claim), "--limit", "20"), capsys)
    assert line == f"error: {claim}: {run} began without a claim: a claim is registered before its run begins " \
                   "(choose another -o directory)"


def test_a_run_under_its_claim_is_resumed_under_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    claimed: tuple[Path, Path]) -> None:
    run, claim = claimed
    items = tmp_path / "items.jsonl"
    assert main(_run(items, run, "--claim", str(claim))) == 0  # the same run again: nothing left to ask
    assert main(_run(items, run)) == 0  # without the claim: the manifest keeps it
    capsys.readouterr()
    assert main(["verify", str(run), "--claim", str(claim)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS: ")


def test_bad_claim_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items, claim = _items(tmp_path), tmp_path / "CLAIM.json"
    for terms, said in [([], "give the claim"), (["--at-least", "50", "--no-worse-than", str(tmp_path)],
                                                 "give the claim"),
                        (["--at-least", "50", "--alpha", "0.01"], "95% interval"),
                        (["--at-least", "150"], "between 0 and 100"),
                        (["--at-least", "50", "--allowed-drop", "2"], "goes with --no-worse-than"),
                        (["--no-worse-than", str(tmp_path)], "--allowed-drop POINTS"),
                        (["--no-worse-than", str(tmp_path), "--allowed-drop", "2"], "checksums.json: missing"),
                        (["--at-least", "50", "--alpha", "0.7"], "between 0 and 0.5")]:
        assert said in _refused(_claim(items, claim, *terms), capsys), terms
    assert "not a regular file" in _refused(_claim(items, claim, "--at-least", "5", "--key", "/dev/null"), capsys)
    assert main(_claim(items, claim, "--at-least", "50")) == 0
    assert "exists already" in _refused(_claim(items, claim, "--at-least", "50"), capsys)
    assert "one DATASET" in _refused(["claim", str(items), str(items), "--model", "scripted:first", "--at-least",
                                      "5", "-o", str(tmp_path / "two.json")], capsys)
    assert "--claim-key and --baseline go with --claim" in _refused(["verify", str(tmp_path), "--baseline", "x"],
                                                                     capsys)


def test_a_baseline_on_other_data_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "other").mkdir()
    base = tmp_path / "base"
    assert main(_run(_items(tmp_path / "other", 20, 10), base)) == 0
    line = _refused(_claim(_items(tmp_path), tmp_path / "C.json", "--no-worse-than", str(base), "--allowed-drop",
                           "5"), capsys)
    assert "baseline: ran on other data" in line


@pytest.fixture
def claimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    items, claim, run = _items(tmp_path), tmp_path / "CLAIM.json", tmp_path / "run"
    assert main(_claim(items, claim, "--at-least", "50")) == 0
    assert main(_run(items, run, "--claim", str(claim))) == 0
    capsys.readouterr()
    return run, claim


def test_a_claim_that_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 claimed: tuple[Path, Path]) -> None:
    run, claim = claimed
    good = json.loads(claim.read_text(encoding="utf-8"))
    bad = tmp_path / "bad.json"
    for text in ["not json", "[]", "{}", json.dumps({**good, "extra": 1}),
                 json.dumps({**good, "claim": {**good["claim"], "written_at": "yesterday"}}),
                 json.dumps({**good, "claim": {**good["claim"], "alpha": 7}}),
                 json.dumps({**good, "claim": {**good["claim"], "comparison": "no_worse_than"}}),
                 json.dumps({**good, "signature": {"public_key": "!!", "signature": 3}}), "[" * 100_000]:
        bad.write_text(text, encoding="utf-8")
        assert main(["verify", str(run), "--claim", str(bad)]) in (2, 4)
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 1
    os.mkfifo(tmp_path / "fifo")
    assert "not a regular file" in _refused(["verify", str(run), "--claim", str(tmp_path / "fifo")], capsys)
    assert "not a regular file" in _refused(_run(tmp_path / "items.jsonl", tmp_path / "r2", "--claim",
                                                 str(tmp_path / "fifo")), capsys)
    assert "no such file" in _refused(["verify", str(run), "--claim", str(tmp_path / "none.json")], capsys)
    assert "--no-data: not with --claim" in _refused(["verify", str(run), "--claim", str(claim), "--no-data"], capsys)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200))
def test_random_bytes_as_a_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str], claimed: tuple[Path, Path],
                                 data: bytes) -> None:
    run, _ = claimed
    path = tmp_path / "random.json"
    path.write_bytes(data)
    assert main(["verify", str(run), "--claim", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"error: {path}")
