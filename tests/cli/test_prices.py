"""`--prices` through the CLI (issue 22 item 11): a hostile table is one located line, exit 2, and nothing is
recorded; a history store that already holds an unreadable cost still serves `runs`, `history` and `report`."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from proctor.cli import main

AIME = Path(__file__).resolve().parents[1] / "fixtures" / "upstream" / "aime_2025" / "train.jsonl"


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["run", "aime-2025", "--data-file", str(AIME), "--model", "scripted:first", "--limit", "3",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress", "-o", str(tmp_path / "run"), *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("text", "message"), [
    ("models:\n  scripted:first: {input: 1e30, output: 1}\n", ":2: scripted:first.input: must be at most"),
    ("models:\n  scripted:first: {input: 1e999999999, output: 1}\n", "must be at most"),
    ("models:\n  ? [a, b]\n  : {input: 1, output: 1}\n", ":2: models: a key must be a name"),
    ("models: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested"),
])
def test_hostile_table_is_one_line_and_nothing_is_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           text: str, message: str) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    code, _, err = _run(tmp_path, capsys, "--prices", str(prices))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_device_or_fifo_as_the_table_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        special: str) -> None:
    path = Path(special) if special.startswith("/") else tmp_path / special
    if not path.exists():
        os.mkfifo(path)  # nobody writes to it: reading it would hang
    code, _, err = _run(tmp_path, capsys, "--prices", str(path))
    assert code == 2 and "not a regular file" in err and not (tmp_path / "run").exists()


def test_a_store_with_an_unreadable_cost_still_serves_runs_history_and_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    code, _, err = _run(tmp_path, capsys, "--price-in", "1", "--price-out", "2")
    assert code == 0, err
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # as a table read before tables were bounded left it
        db.execute("UPDATE runs SET results = json_set(results, '$.cost.total', '1e999999999', "
                   "'$.cost.per_correct', 'NaN')")
    results = tmp_path / "run" / "results.json"
    data = json.loads(results.read_text())
    results.write_text(json.dumps(data | {"cost": data["cost"] | {"total": "1e999999999"}}))
    for argv in (["runs"], ["history", "--model", "scripted:first", "--dataset", "aime-2025"]):
        caplog.clear()
        code = main([*argv, "--store", str(tmp_path / "s.sqlite")])
        _, err = capsys.readouterr()
        assert code == 0, err
        assert "unreadable cost (cost, cost_per_correct); it is shown without one" in caplog.text  # a warning: line
        assert "Traceback" not in err
    caplog.clear()
    code = main(["report", str(tmp_path / "run"), "--format", "md", "-o", str(tmp_path / "r.md")])
    _, err = capsys.readouterr()
    assert code == 0, err
    # results.json is never trusted (#32.1): the edited total is named and the samples' cost is shown
    assert "cost.total: '1E+999999999', not" in caplog.text and "1E+999999999" not in (tmp_path / "r.md").read_text()
