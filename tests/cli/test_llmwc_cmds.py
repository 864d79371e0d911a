"""`proctor import` on hostile results directories (issue 22 items 4, 10, 14): every wrong type is one
`path:line: key: message` and exit 2 with nothing written; names never collide or climb; no escape bytes
from data reach the terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from proctor.cli import main


def _results(root: Path, models: dict[str, list[dict[str, Any]]], run: Any = None,
             summary: Any = None) -> Path:
    """An llm-wc results directory in its exact layout (synthetic rows)."""
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps(run if run is not None else {
        "benchmark": {"name": "mmlu_pro", "output_dir": str(root), "seed": 12345, "limit_subjects": None,
                      "limit_per_subject": 5},
        "request_defaults": {"temperature": 0.0}, "models": [], "started_at": "2026-01-26T15:43:45Z"}))
    for name, rows in models.items():
        d = root / "models" / name
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(rows, indent=2))
        (d / "summary.json").write_text(json.dumps(summary if summary is not None else {"model": name, "seed": 1}))
    return root


def _rows(n: int = 4, **change: Any) -> list[dict[str, Any]]:
    rows = [{"question_id": i, "question": f"Q{i}?", "options": ["x", "y"], "answer": "B", "answer_index": 1,
             "category": "law", "pred": "B" if i % 2 else "A", "model_outputs": "The answer is (B)."}
            for i in range(n)]
    rows[-1].update(change)
    return rows


def _import(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["import", str(root), "--store", str(tmp_path / "s.sqlite"), "--runs-root", str(tmp_path / "runs")])
    got = capsys.readouterr()
    return code, got.out, got.err


HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("benchmark a string", {"run": {"benchmark": "mmlu_pro"}}, "run.json:1: benchmark: Input should be"),
    ("run.json a list", {"run": [1, 2]}, "run.json:1: Input should be a valid dictionary"),
    ("summary a list", {"summary": [1]}, "summary.json:1: Input should be a valid dictionary"),
    ("summary accuracy a word", {"summary": {"accuracy": "high"}}, "summary.json:1: accuracy:"),
    ("summary seed a list", {"summary": {"seed": [1, 2]}}, "summary.json:1: seed:"),
    ("request_params max_tokens -5", {"summary": {"request_params": {"max_tokens": -5}}},  # issue 32 #13
     "summary.json: request_params.max_tokens:"),
    ("model_outputs 42", {"row": {"model_outputs": 42}}, "results.json:NN: [3].model_outputs:"),
    ("pred a list", {"row": {"pred": ["B"]}}, "results.json:NN: [3].pred:"),
    ("pred true", {"row": {"pred": True}}, "results.json:NN: [3].pred:"),
    ("answer an object", {"row": {"answer": {"x": 1}}}, "results.json:NN: [3].answer:"),
    ("error a number", {"row": {"error": 5}}, "results.json:NN: [3].error:"),
    ("a row a string", {"rows": ["row"]}, "results.json:1: [0]: Input should be a valid dictionary"),
    ("no pred", {"rows": [{"question_id": 1, "answer": "B"}]}, "results.json:2: [0].pred: required field"),
    ("results an object", {"rows": {"a": 1}}, "results.json:1: Input should be a valid list"),
    ("lone surrogate", {"raw": '[{"pred": "\\ud800", "answer": "A"}]'}, "results.json:1: [0].pred: text with a lone"),
    ("pred of 5,000 digits", {"raw": '[{"pred": ' + "9" * 5000 + ', "answer": 1}]'}, "results.json: unreadable JSON"),
    ("200k deep", {"raw": "[" * 200_000}, "results.json"),
    # issue 32 #4: a repeated question_id would silently drop a row (2/6 instead of 3/7)
    ("repeated question_id", {"row": {"question_id": 1}}, "results.json:NN: [3].question_id: 1 repeats row [1]"),
]


@pytest.mark.parametrize(("kind", "change", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_wrong_types_are_one_clear_error_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                kind: str, change: dict[str, Any],
                                                                expected: str) -> None:
    rows = change.get("rows", _rows(**change.get("row", {})))
    root = _results(tmp_path / "mmlu_pro_20260126T154345Z", {"good": _rows(), "hostile": rows},
                    run=change.get("run"), summary=change.get("summary"))
    if "raw" in change:
        (root / "models" / "hostile" / "results.json").write_text(change["raw"])
    code, _out, err = _import(tmp_path, root, capsys)
    assert code == 2 and "Traceback" not in err, err
    assert re.search(re.escape(expected).replace("NN", r"\d+"), err), err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "s.sqlite").exists()  # the good model neither


@pytest.mark.parametrize("pred", ["²", "٣", "1" * 5000])
def test_odd_digits_are_graded_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str], pred: str) -> None:
    """`"²"` is a digit to str.isdigit but not a number; 5,000 digits overflow int(): both simply wrong."""
    root = _results(tmp_path / "aime_2025_20260127T053405Z", {"m": [{"problem_idx": 1, "answer": 2, "pred": pred}]},
                    run={"benchmark": {"name": "aime_2025"}})
    code, _out, err = _import(tmp_path, root, capsys)
    assert code == 0, err
    (run_dir,) = (tmp_path / "runs" / "imported").iterdir()
    sample = json.loads((run_dir / "samples.jsonl").read_text())
    assert sample["outcome"] == "wrong"


def test_same_named_results_and_colliding_models_get_their_own_directories(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two `mmlu_pro_X` from different parents, models `a b`/`a_b`, and `..`-like names: four imports, four
    run directories, all inside runs/imported (22.4)."""
    first = _results(tmp_path / "one" / "mmlu_pro_X", {"a b": _rows(), "a_b": _rows(2)})
    second = _results(tmp_path / "two" / "mmlu_pro_X", {"a b": _rows(3), "..m..": _rows(1)})
    for root in (first, second):
        code, _, err = _import(tmp_path, root, capsys)
        assert code == 0, err
    dirs = list((tmp_path / "runs" / "imported").iterdir())
    assert len(dirs) == 4 and all(not d.name.startswith(".") for d in dirs)
    sizes = sorted(len((d / "samples.jsonl").read_text().splitlines()) for d in dirs)
    assert sizes == [1, 2, 3, 4]  # nothing overwrote anything
    code, _out, err = _import(tmp_path, first, capsys)  # importing again replaces its own directories only
    assert code == 0 and len(list((tmp_path / "runs" / "imported").iterdir())) == 4


def test_escapes_from_data_never_reach_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _results(tmp_path / "mmlu_pro_\x1b[2J", {"evil\x1b]8;;x\x07": _rows()},
                    summary={"model": "m\x1b[31m", "accuracy": 0.1})
    (root / "models" / "summary-only\x1b[5m").mkdir()
    (root / "models" / "evil\x1b]8;;x\x07" / "summary.json").unlink()
    code, out, err = _import(tmp_path, root, capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\x1b" not in err and "\x07" not in out
    assert "imported evil\\x1b]8;;x\\x07" in out and "summary-only\\x1b[5m" in err
    board = main(["leaderboard", "mmlu-pro", "--store", str(tmp_path / "s.sqlite")])
    shown = capsys.readouterr()
    assert board == 0 and "\x1b" not in shown.out + shown.err


def test_a_directory_with_nothing_to_import_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _results(tmp_path / "r", {})
    (root / "models" / "summary_only").mkdir(parents=True)
    code, _out, err = _import(tmp_path, root, capsys)
    assert code == 2 and "no models/<name>/results.json: nothing to import" in err


@pytest.mark.parametrize(("key", "meant"), [("limit_per_subjectt", "limit_per_subject"), ("sed", "seed"),
                                            ("prompt_typ", "prompt_type")])
def test_a_misspelt_benchmark_key_is_refused_not_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         key: str, meant: str) -> None:
    """A typo would run with the default silently (`limit_per_subjectt: 2` ran the whole data set)."""
    config = tmp_path / "config.yaml"
    config.write_text(f"benchmark:\n  name: mmlu_pro\n  output_dir: {tmp_path / 'out'}\n  {key}: 2\n"
                      "models:\n  - name: scripted:first\n")
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"config.yaml:2: benchmark: unknown key '{key}': did you mean '{meant}'?" in err, err
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("out_*"))
