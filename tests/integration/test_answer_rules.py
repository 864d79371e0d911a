"""The real MMLU-Pro test split's shapes (1- and 2-option rows, N/A padding) run end to end, scored by the
benchmark's reference rule beside proctor's reader: ambiguous rate, --extract and --no-answer recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor.benchmarks import load_task

from .conftest import latest

RAMBLE = "The answer is (A).\nQuestion: what next?\nAnswer: The answer is (B)."


def _row(qid: int, options: list[str], index: int, category: str = "psychology") -> dict[str, Any]:
    """One row in TIGER-Lab/MMLU-Pro's exact schema."""
    return {"question_id": qid, "question": f"Synthetic question {qid}?", "options": options,
            "answer": "ABCDEFGHIJ"[index], "answer_index": index, "cot_content": "", "category": category,
            "src": "synthetic"}


def _mmlu_pro_dir(tmp: Path) -> Path:
    folder = tmp / "mmlu_pro"
    folder.mkdir()
    rows = [
        _row(1, [f"opt {i}" for i in range(10)], 2),
        _row(2, ["The only option"], 0),  # one option, as five real rows
        _row(3, ["x", "N/A", "y", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"], 2),  # two options after N/A
        _row(4, ["a", "b", "c", "d", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"], 0),
    ]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    val = {**_row(90, ["p", "q"], 1), "cot_content": "A: Let's think step by step. The answer is (B)."}
    (folder / "validation.jsonl").write_text(json.dumps(val) + "\n")
    return folder


def _run(cli: Any, tmp: Path, data: Path, reply: str, name: str, *extra: str, model: str = "") -> tuple[Path, str]:
    """`proctor run mmlu-pro` answering `reply` to every question (or as the scripted `model` says)."""
    out = tmp / name
    res = cli("run", "mmlu-pro", "--data-file", data, "--model", model or f"scripted:fixed={reply}", "-o", out,
              "--store", tmp / "store.sqlite", "--no-progress", *extra)
    assert res.code == 0, res.err
    return out, res.out


def _replayed(cli: Any, tmp: Path, data: Path, script: Path, name: str, *extra: str) -> tuple[Path, str]:
    return _run(cli, tmp, data, "", name, *extra, model=f"scripted:file={script}")


def test_one_and_two_option_rows_run_and_both_readings_are_kept(cli: Any, tmp_path: Path) -> None:
    data = _mmlu_pro_dir(tmp_path)
    run_dir, printed = _run(cli, tmp_path, data, RAMBLE, "reference")
    printed = " ".join(printed.split())  # the console wraps long lines
    samples = latest(run_dir)
    assert {s["item_id"]: s["modality"] for s in samples.values()} == {
        "mmlu-pro.1": "choiceof10", "mmlu-pro.2": "choiceof1", "mmlu-pro.3": "choiceof2", "mmlu-pro.4": "choiceof4"}
    assert {s["extracted"] for s in samples.values()} == {"A"}  # TIGER-Lab's rule: the first "answer is"
    assert all(s["ambiguous"] is True for s in samples.values())
    readings = samples["mmlu-pro.3#0"]["details"]["readings"]
    assert readings["reference"] == {"reader": "tiger-lab-mmlu-pro", "rule": "answer_is_first", "answer": "A",
                                     "score": 0.0, "level": 1}
    assert readings["robust"] == {"reader": "proctor", "rule": "answer_is", "answer": "B", "score": 1.0,
                                  "level": None}
    assert readings["scored_by"] == "reference"

    manifest = json.loads((run_dir / "manifest.json").read_text())
    results = json.loads((run_dir / "results.json").read_text())
    assert (manifest["spec"]["scorer"]["extract"], manifest["spec"]["scorer"]["no_answer"]) == ("reference", "guess")  # the authors' count by default
    assert (manifest["spec"]["scorer"]["prompt_kind"], manifest["spec"]["scorer"]["answer_rule"]) == ("five_shot", "tiger-lab-mmlu-pro")
    assert "answer_rule" not in manifest["scorer"] and "no_answer" not in manifest  # once, in the spec (v5)
    assert (results["extract"], results["no_answer"]) == ("reference", "guess")
    assert results["overall"]["accuracy"] == 0.5  # items 2 and 4 answer A
    assert (results["overall"]["n_ambiguous"], results["overall"]["ambiguous_rate"]) == (4, 1.0)
    assert "ambiguous: 4 answers (100.0%)" in printed and "scored by reference (--extract)" in printed

    robust_dir, _ = _run(cli, tmp_path, data, RAMBLE, "robust", "--extract", "robust")
    robust = json.loads((robust_dir / "results.json").read_text())
    assert robust["extract"] == "robust" and robust["overall"]["accuracy"] == 0.25  # only item 3 answers B
    assert robust_dir.resolve() != run_dir.resolve()


def test_proctors_own_kind_is_read_by_proctors_reader(cli: Any, tmp_path: Path) -> None:
    """zero_shot ends "Answer: ": a bare letter is the answer, never no-answer by TIGER-Lab's rule, never
    ambiguous; the manifest says no reference rule read it."""
    data = _mmlu_pro_dir(tmp_path)
    run_dir, _ = _run(cli, tmp_path, data, "A", "zero", "--prompt", "zero_shot")
    samples = latest(run_dir).values()
    assert {(s["extracted"], s["outcome"], s["ambiguous"]) for s in samples} == {("A", "correct", None),
                                                                                 ("A", "wrong", None)}
    assert all(s["details"].get("readings") is None for s in samples)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    scorer = manifest["spec"]["scorer"]  # manifest v5: each setting once, in the spec
    assert (scorer["prompt_kind"], scorer["answer_rule"], scorer["no_answer"]) == ("zero_shot", None, "wrong")
    results = json.loads((run_dir / "results.json").read_text())
    assert results["overall"]["accuracy"] == 0.5 and results["overall"].get("n_ambiguous", 0) == 0
    assert "answer_reading" not in results  # proctor's reader has no levels


def test_no_answer_guess_credits_the_expected_value(cli: Any, tmp_path: Path) -> None:
    data = _mmlu_pro_dir(tmp_path)
    run_dir, printed = _run(cli, tmp_path, data, "no idea.", "guess", "--no-answer", "guess")
    printed = " ".join(printed.split())
    results = json.loads((run_dir / "results.json").read_text())
    assert json.loads((run_dir / "manifest.json").read_text())["spec"]["scorer"]["no_answer"] == "guess"
    assert results["no_answer"] == "guess" and results["overall"]["n_no_answer"] == 4
    assert abs(results["overall"]["accuracy"] - (1 / 10 + 1 + 1 / 2 + 1 / 4) / 4) < 1e-12
    assert "credited 1/k" in printed
    assert all(s["outcome"] == "no_answer" and s["score"] == 0.0 for s in latest(run_dir).values())


def test_bad_extract_and_no_answer_values_are_refused(cli: Any, tmp_path: Path) -> None:
    data = _mmlu_pro_dir(tmp_path)
    for flag, value in (("--extract", "last"), ("--no-answer", "random")):
        res = cli("run", "mmlu-pro", "--data-file", data, "--model", "scripted:first", "-o", tmp_path / value,
                  "--no-progress", "--no-history", flag, value)
        assert res.code == 2 and f"{flag} must be" in res.err and "Traceback" not in res.err


def test_stats_notes_the_one_and_two_option_items(cli: Any, tmp_path: Path) -> None:
    data = _mmlu_pro_dir(tmp_path)
    res = cli("stats", "mmlu-pro", "--data-file", data)
    assert res.code == 0 and "note: 2 choice items have only one or two options" in res.err
    assert "choiceof1" in res.out and "choiceof2" in res.out
    doc = json.loads(cli("stats", "mmlu-pro", "--data-file", data, "--json").out)
    assert doc["few_options"] == 2


MIXED = {  # item → a reply read at each level of TIGER-Lab's chain (synthetic)
    1: "so the answer is (C)",  # level 1, right
    2: "Answer: A",  # level 2, right
    3: "I think x, y.",  # level 3 reads the pronoun I: wrong (proctor's reader finds nothing)
    4: "no idea.",  # unread: a guess, 1/4 by default
}


def test_default_counts_as_the_authors_and_says_how_each_number_was_read(cli: Any, tmp_path: Path) -> None:
    """TIGER-Lab's kinds count an unread reply 1/k by default; `--no-answer wrong` gives the strict figure; the
    results, the console line and the samples say which level read each answer."""
    data = _mmlu_pro_dir(tmp_path)
    task = load_task("mmlu-pro", data_file=data)
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps({"prompt": task.prompts.messages(it, "five_shot")[-1].content,
                                          "answer": MIXED[int(it.identifier.split(".")[-1])]}) + "\n"
                              for it in task.items))
    run_dir, printed = _replayed(cli, tmp_path, data, script, "levels")
    printed = " ".join(printed.split())
    samples = latest(run_dir)
    levels = {k: s["details"]["readings"]["reference"]["level"] for k, s in samples.items()}
    assert levels == {"mmlu-pro.1#0": 1, "mmlu-pro.2#0": 2, "mmlu-pro.3#0": 3, "mmlu-pro.4#0": None}
    results = json.loads((run_dir / "results.json").read_text())
    reading = results["answer_reading"]
    assert reading["by_level"] == {"1": 1, "2": 1, "3": 1, "none": 1} and reading["no_answer"] == "guess"
    assert abs(reading["accuracy"] - (1 + 1 + 0 + 1 / 4) / 4) < 1e-12
    assert abs(results["overall"]["accuracy"] - reading["accuracy"]) < 1e-12
    assert (reading["fallback_share"], reading["guess_share"], reading["strict_accuracy"]) == (0.25, 0.25, 0.5)
    assert reading["robust_accuracy"] == 0.5
    assert "authors' accuracy 56.2%" in printed and "25.0% read only by the lone-letter fallback" in printed

    strict_dir, _ = _replayed(cli, tmp_path, data, script, "strict", "--no-answer", "wrong")
    strict = json.loads((strict_dir / "results.json").read_text())
    assert strict["overall"]["accuracy"] == 0.5 and strict["answer_reading"]["guess_share"] == 0.0
    assert strict_dir.resolve() != run_dir.resolve()  # the policy is part of the run's identity
