"""BBH end to end on synthetic rows (SaylorTwift/bbh's schema: input, target) with a scripted model: per-task and
macro accuracy, the run id covering the kind (prompt and rule), and bad data refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.api import eval_spec
from proctor.benchmarks import bbh
from proctor.cli import main
from proctor.run.resolve import resolve

UPSTREAM = Path(__file__).parents[1] / "fixtures" / "upstream" / "bbh"


def test_a_scripted_run_scores_per_task_and_macro(tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    rows = {t: [json.loads(x) for x in (UPSTREAM / f"{t}.jsonl").read_text().splitlines()]
            for t in ("boolean_expressions", "snarks")}
    answers = {"boolean_expressions": ["So the answer is False.", "So the answer is False."],  # right, wrong
               "snarks": ["So the answer is (A)."]}  # right
    replies.write_text("".join(json.dumps({"prompt": bbh.context(bbh.COT_FEWSHOT, t, r), "answer": a}) + "\n"
                               for t in rows for r, a in zip(rows[t], answers[t], strict=True)))
    out = tmp_path / "run"
    assert main(["run", "bbh", "--data-file", str(UPSTREAM), "--model", f"scripted:file={replies}", "-o", str(out),
                 "--no-history"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["overall"]["accuracy"] == pytest.approx(2 / 3)
    assert {k: v["accuracy"] for k, v in results["by_category"].items()} == {"boolean_expressions": 0.5, "snarks": 1.0}
    assert results["macro_accuracy"] == pytest.approx(0.75)


def test_the_run_id_covers_the_kind() -> None:
    few = resolve(eval_spec("bbh", "scripted:first", data_file=str(UPSTREAM)))
    zero = resolve(eval_spec("bbh", "scripted:first", data_file=str(UPSTREAM), prompt="cot_zeroshot"))
    assert few.scorer.answer_rule == "lm-eval-bbh-cot-fewshot" and zero.scorer.answer_rule == "lm-eval-bbh-cot-zeroshot"
    assert few.run_id() != zero.run_id()
    assert few.generation.stop == ("</s>", "Q", "\n\n") and few.generation.max_tokens == 1024
    assert zero.generation.stop == ("</s>", "Q:", "<|im_end|>") and zero.generation.max_tokens == 256


@pytest.mark.parametrize("row", [{"input": "x?"}, {"input": "x?", "target": ""}])
def test_bad_rows_are_one_line(row: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (path := tmp_path / "snarks.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["run", "bbh", "--data-file", str(path), "--model", "scripted:first", "--no-history",
                 "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "target" in err, err


def test_offline_hub_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    assert main(["run", "bbh", "--model", "scripted:first", "--no-history"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "SaylorTwift/bbh" in err and "--data-file" in err


@given(st.lists(st.one_of(st.sampled_from(["{{target}}", "{{ input }}", "{{…}}", "{x}", "%s", "{{", "}}"]),
                          st.text(max_size=10)), max_size=8).map("".join),
       st.sampled_from(["(A)", "True", "{{input}}", "%s"]))
def test_a_row_is_sent_as_it_is(text: str, target: str) -> None:
    """Only the template's own `{{input}}`/`{{target}}` are filled; a row holding `{{target}}` is not rewritten."""
    row = {"input": text, "target": target}
    assert bbh.render("Q: {{input}}\nA: Let's think step by step.", row) == f"Q: {text}\nA: Let's think step by step."
    assert bbh.render("{{ target }}", row) == target
