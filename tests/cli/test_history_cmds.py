from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from history_runs import binary, write_run  # tests/ is on sys.path (tests/conftest.py's directory)

import proctor
from proctor.cli import main
from proctor.run.store import Store

SRC = str(Path(proctor.__file__).resolve().parents[1])


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with hf:a (two runs, improving) and hf:b on dataset `synth`."""
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "store.sqlite"
    runs = tmp_path / "runs"
    with Store(path) as st:
        st.record_run(write_run(runs, "aaaa-old", "hf:a", binary(200, range(100)), started_at="2025-01-01T00:00:00+00:00"))
        st.record_run(write_run(runs, "aaaa-new", "hf:a", binary(200, range(160)), started_at="2025-03-01T00:00:00+00:00"))
        st.record_run(write_run(runs, "bbbb", "hf:b", binary(200, set(range(50, 170))), revision="rev2",
                                started_at="2025-02-01T00:00:00+00:00"))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_runs_lists_and_filters(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "runs", "--store", str(store))
    assert code == 0 and "3 run(s)" in out and "hf:a" in out and "hf:b" in out and "80.0" in out
    code, out, _ = run(capsys, "runs", "--store", str(store), "--model", "hf:b", "--json")
    assert code == 0 and [r["run_id"] for r in json.loads(out)] == ["bbbb"]


def test_history_over_time_by_category_and_modality(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "history", "--model", "hf:a", "--dataset", "synth", "--store", str(store), "--json")
    rows = json.loads(out)
    assert code == 0 and [r["accuracy"] for r in rows] == [0.5, 0.8]  # oldest first
    assert set(rows[0]["by_category"]) == {"law", "math"}
    code, out, _ = run(capsys, "history", "--model", "hf:a", "--dataset", "synth", "--store", str(store),
                       "--by", "category")
    assert code == 0 and "law %" in out and "math %" in out and "2025-01-01" in out and "2025-03-01" in out
    code, out, _ = run(capsys, "history", "--model", "hf:a", "--dataset", "synth", "--store", str(store),
                       "--by", "modality")
    assert code == 0 and "choiceof4 %" in out


def test_compare_by_id_prefix_and_by_directory(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", "aaaa-new", "bbbb", "--store", str(store), "--json")
    d = json.loads(out)
    assert code == 0 and d["overall"]["diff"] == pytest.approx(0.2) and d["overall"]["p_value"] < 1e-6
    assert any("dataset revisions" in w for w in d["warnings"])
    code, out, err = run(capsys, "compare", str(tmp_path / "runs" / "aaaa-new"), "bbbb", "--store", str(store))
    assert code == 0 and "+20.0" in out and "overall" in out and "law" in out
    assert "A: hf:a · generate · zero_shot" in out and err.startswith("warning: the runs differ in dataset revisions")


def test_leaderboard(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--json", "--n-boot", "500")
    (d,) = json.loads(out)  # one board: every run has one setting
    assert code == 0 and d["top"] == "hf:a" and [e["run_id"] for e in d["entries"]] == ["aaaa-new", "bbbb"]
    assert d["setting"] == "generate · zero_shot"
    assert d["adjusted"] <= d["observed"] == pytest.approx(0.8)
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--n-boot", "500")
    assert code == 0 and "selection-adjusted" in out and "P(stays on top)" in out


def _board(tmp_path: Path, scores: dict[str, set[int]]) -> Path:
    path = tmp_path / "board.sqlite"
    with Store(path) as st:
        for model, right in scores.items():
            st.record_run(write_run(tmp_path / "board", model.replace(":", "-"), model, binary(8, right)))
    return path


@pytest.mark.parametrize(("scores", "why"), [
    ({"hf:solo": {0, 1, 2}}, "one model"),
    ({"hf:a": {0, 1, 2}, "hf:b": {3, 4, 5}, "hf:c": {0, 4, 7}}, "every model tied"),
])
def test_leaderboard_without_a_selection_corrects_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scores: dict[str, set[int]], why: str
) -> None:
    store = _board(tmp_path, scores)
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--json", "--n-boot", "300")
    (d,) = json.loads(out)
    assert code == 0 and d["adjusted"] == d["observed"] == 0.375 and d["bias"] == 0.0
    assert "-0.0" not in out
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--n-boot", "300")
    assert code == 0 and f"observed 37.5% (no winner's-curse correction: {why})" in out
    assert "-0.0" not in out and "selection-adjusted" not in out


def test_leaderboard_adjusted_never_exceeds_observed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A clear winner on few items: the bootstrap's excess can come out negative; the correction never raises."""
    store = _board(tmp_path, {"hf:a": set(range(8)), "hf:b": {0}})
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--json", "--n-boot", "300")
    (d,) = json.loads(out)
    assert code == 0 and d["adjusted"] <= d["observed"] == 1.0 and d["bias"] >= 0
    assert d["top_vs_next"]["verdict"].startswith("hf:a ahead of hf:b by 87.5 points")
    code, out, _ = run(capsys, "leaderboard", "synth", "--store", str(store), "--n-boot", "300")
    assert "-0.0" not in out and "#1 vs #2: hf:a ahead of hf:b by 87.5 points" in out


def test_compare_prints_the_records_verdict(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", "aaaa-new", "bbbb", "--store", str(store), "--json")
    verdict = json.loads(out)["verdict"]
    assert verdict.startswith("hf:a ahead of hf:b by 20.0 points [") and verdict.endswith("200 shared items")
    code, out, _ = run(capsys, "compare", "aaaa-new", "bbbb", "--store", str(store))
    assert code == 0 and verdict in " ".join(out.split())


def test_unknown_things_exit_2_without_traceback(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ("compare", "no-such-run", "bbbb", "--store", str(store)),
        ("history", "--model", "hf:zzz", "--dataset", "synth", "--store", str(store)),
        ("leaderboard", "nope", "--store", str(store)),
        ("runs", "--store", str(tmp_path / "absent.sqlite")),
        ("history", "--model", "hf:a", "--dataset", "synth", "--by", "colour", "--store", str(store)),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        assert "Traceback" not in err and err.strip(), argv
    assert not (tmp_path / "absent.sqlite").exists()  # reading never creates a store


def test_record_imports_run_dirs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_run(tmp_path / "runs", "rrrr", "hf:r", binary(10, range(3)))
    store = tmp_path / "new.sqlite"
    code, out, _ = run(capsys, "record", str(d), "--store", str(store))
    assert code == 0 and "recorded rrrr" in out and "30.0" in out
    assert [r.run_id for r in Store(store).list_runs()] == ["rrrr"]


def test_module_entry_point_in_subprocess(store: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "PROCTOR_STORE": str(store)}
    p = subprocess.run([sys.executable, "-m", "proctor", "compare", "aaaa-old", "aaaa-new", "--json"],
                       check=False, capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["overall"]["diff"] == pytest.approx(-0.3)
    assert p.stderr == ""  # not a terminal: no progress bar, no noise


@pytest.mark.parametrize("columns", [80, 120])
def test_runs_on_a_narrow_terminal_keeps_every_field_and_whole_run_ids(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        columns: int) -> None:
    """#32.27: `proctor runs` in a terminal 80 or 120 columns wide: every run id whole (to copy into
    `compare`), dataset, revision, setting and n shown, no line wider than the terminal, a few lines a run
    (the table collapsed dataset…n to empty columns at 80, and rows were 8 lines tall at 120)."""
    from rich.console import Console

    from proctor.cli import history_cmds

    with Store(store) as st:
        st.record_run(write_run(tmp_path / "runs", "c0459ea7278bffff", "openai:Qwen/Qwen3-30B-A3B-Instruct-2507",
                                binary(200, range(10)), prompt_kind="chain_of_thought", revision="0123456789abcdef"))
        recs = st.list_runs()
    console = Console(width=columns, record=True, force_terminal=True, color_system=None)
    monkeypatch.setattr(history_cmds, "_console", lambda: console)
    assert main(["runs", "--store", str(store)]) == 0
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns
    for r in recs:
        assert r.run_id[:12] in text and r.model in text
    for needed in ("synth", "rev2", "0123456789ab", "chain_of_thought", "200"):
        assert needed in text, needed
    assert len([line for line in lines if line.strip()]) <= 1 + 4 * len(recs)
