"""`--human-labels` from the command line: `run` records them (not in the run id) and writes the judge-corrected
block; `report`, `compare` and `gate` read them from the run or the flag; `plan --label-width` sizes them; a bad
file is one `path:line:` line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main

ROOT = Path(__file__).resolve().parents[2]
MC = ROOT / "examples" / "items" / "multiple-choice.jsonl"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run(tmp_path: Path, model: str, *extra: str) -> list[str]:
    return ["run", str(MC), "--model", model, "-o", str(tmp_path / model.split(":")[1]), "--no-progress",
            "--no-history", "--no-cache", *extra]


def _labels(tmp_path: Path, run: Path, flip: tuple[int, ...] = (1, 4), n: int = 10) -> Path:
    """Labels on the first n samples of `run`: its verdicts, with the humans disagreeing at `flip`."""
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    out = tmp_path / f"{run.name}-labels.jsonl"
    out.write_text("".join(json.dumps({"id": s["item_id"], "correct": (s["outcome"] == "correct") ^ (k in flip)})
                           + "\n" for k, s in enumerate(samples[:n])))
    return out


def test_run_records_the_labels_and_writes_the_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(capsys, *_run(tmp_path, "scripted:first"))[0] == 0
    run = tmp_path / "first"
    before = json.loads((run / "manifest.json").read_text())["run_id"]
    labels = _labels(tmp_path, run)
    code, out, _ = _cli(capsys, *_run(tmp_path, "scripted:first", "--human-labels", str(labels)))
    manifest = json.loads((run / "manifest.json").read_text())
    block = json.loads((run / "results.json").read_text())["judge_corrected"]
    assert code == 0 and manifest["run_id"] == before  # not in the run id: the same run, resumed
    assert manifest["spec"]["human_labels"]["path"] == str(labels) and len(manifest["spec"]["human_labels"]["labels"]) == 10
    assert (block["n"], block["n_labelled"], block["agreement"]["n"]) == (16, 10, 10)
    assert block["agreement"]["confusion"]["correct/wrong"] + block["agreement"]["confusion"]["wrong/correct"] == 2
    assert "judge-corrected accuracy" in out and "judge vs humans on 10 samples: agree 80%" in out
    code, out, err = _cli(capsys, *_run(tmp_path, "scripted:first"))  # a resume without the flag keeps them
    assert code == 0 and "judge-corrected accuracy" in out
    assert "judge_corrected" in json.loads((run / "results.json").read_text())
    assert _cli(capsys, "verify", str(run))[0] == 0  # the checksums cover the rewritten files
    report = tmp_path / "r.md"
    code, out, err = _cli(capsys, "report", str(run), "-o", str(report))
    assert code == 0 and "## Judge-corrected accuracy (human labels)" in report.read_text(), err
    assert "disagrees" not in err  # results.json is what its samples and labels give


def test_report_compare_and_gate_take_labels_from_the_flag(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    for model in ("scripted:first", "scripted:random"):
        assert _cli(capsys, *_run(tmp_path, model))[0] == 0
    a, b = tmp_path / "first", tmp_path / "random"
    la, lb = _labels(tmp_path, a), _labels(tmp_path, b, flip=())
    html = tmp_path / "r.html"
    code, _, err = _cli(capsys, "report", str(a), str(b), "-o", str(html), "--human-labels", f"{a}={la}")
    assert code == 0 and "judge-corrected <b>" in html.read_text(), err
    code, out, _ = _cli(capsys, "compare", str(a), str(b))
    assert code == 0 and "judge-corrected" not in out  # no labels: the plain comparison alone
    code, out, _ = _cli(capsys, "compare", str(a), str(b), "--human-labels", f"{a}={la}", "--human-labels",
                        f"{b}={lb}")
    assert code == 0 and "judge-corrected A − B" in out and "10 of 16 shared items labelled in both" in out
    code, out, _ = _cli(capsys, "compare", str(a), str(b), "--json", "--human-labels", f"{a}={la}",
                        "--human-labels", f"{b}={lb}")
    assert json.loads(out)["judge_corrected"]["n_labelled"] == 10
    code, out, err = _cli(capsys, "gate", str(a), "--baseline", str(b), "--max-drop", "40", "--human-labels",
                          str(la), "--baseline-labels", str(lb))
    assert code in (0, 1, 3) and "overall, judge-corrected" in out and "decided on the judge-corrected" in out
    code, out, err = _cli(capsys, "gate", str(a), "--baseline", str(b), "--max-drop", "40", "--human-labels", str(la))
    assert code == 0 and "human labels on one run only" in err
    code, _, err = _cli(capsys, "compare", str(a), str(b), "--human-labels", str(la))
    assert code == 2 and "RUN=FILE" in err


def test_a_bad_labels_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "mc.geo.1", "correct": true}\n{"id": "mc.geo.2", "correct": "perhaps"}\n')
    code, _, err = _cli(capsys, *_run(tmp_path, "scripted:first", "--human-labels", str(bad)))
    assert code == 2 and f"{bad}:2: correct: expected true/false" in err and "Traceback" not in err
    assert not (tmp_path / "first").exists()  # refused before anything is asked
    code, _, err = _cli(capsys, "gate", str(tmp_path), "--baseline", str(tmp_path), "--max-drop", "5",
                        "--human-labels", str(tmp_path / "absent.csv"))
    assert code == 2 and "Traceback" not in err


def test_plan_sizes_the_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "plan", "--label-width", "6", "--judge-accuracy", "66", "--disagreement", "5",
                        "--items", "2000", "--json")
    got = json.loads(out)
    assert code == 0 and got["labels_needed"] == 410 and got["labels_alone"] == 958
    code, out, _ = _cli(capsys, "plan", "--label-width", "1", "--judge-accuracy", "66", "--disagreement", "5",
                        "--items", "500")
    assert code == 0 and "out of reach" in out
    code, _, err = _cli(capsys, "plan", "--label-width", "6")
    assert code == 2 and "--judge-accuracy" in err
    code, _, err = _cli(capsys, "plan", "--accuracy", "70")
    assert code == 2 and "--delta" in err
