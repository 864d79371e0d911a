"""Spec benchmarks (#33) through the spine (#30): --shots/--format/--fewshot-from build the RunSpec from the CLI
and from Python alike, resolve gives a spec its own scoring mode, and the run id covers the prompts and the
few-shot pool (DatasetRef.prompt_hash), which the items' content hash does not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import proctor
from proctor.api import eval_spec
from proctor.cli import main
from proctor.log.runlog import read_manifest
from proctor.run.resolve import resolve

QUIZ = Path(__file__).parent.parent / "fixtures" / "benchmarks" / "quiz.yaml"
ITEMS = Path(__file__).parent.parent.parent / "examples" / "items" / "demo.jsonl"
MODEL = "scripted:first"


def test_a_spec_runs_in_its_own_mode_unless_mode_is_given() -> None:
    assert eval_spec(QUIZ, MODEL, resolved=False).scorer.mode is None  # left to the benchmark until resolved
    assert resolve(eval_spec(QUIZ, MODEL)).scorer.mode == "logprob"  # quiz.yaml: scoring.mode loglikelihood
    assert resolve(eval_spec(QUIZ, MODEL, mode="generate")).scorer.mode == "generate"
    assert resolve(eval_spec(ITEMS, MODEL)).scorer.mode == "generate"  # item data declares none


def test_shots_and_format_reach_the_spec_and_change_the_run_id() -> None:
    spec = eval_spec(QUIZ, MODEL, resolved=False, shots=2, format="chat")
    assert (spec.scorer.shots, spec.scorer.format) == (2, "chat")
    ids = {resolve(eval_spec(QUIZ, MODEL, mode="generate", **given)).run_id()  # chat: generation's (#36)
           for given in ({}, {"shots": 2}, {"format": "chat"}, {"shots": 2, "format": "chat"})}
    assert len(ids) == 4
    with pytest.raises(proctor.ProctorError, match="format"):
        eval_spec(QUIZ, MODEL, format="markdown")


def test_the_few_shot_pool_is_in_the_run_id_though_the_items_are_not_changed(tmp_path: Path) -> None:
    copy = tmp_path / "quiz.yaml"
    shutil.copy(QUIZ, copy)
    shutil.copytree(QUIZ.parent / "quiz", tmp_path / "quiz")
    before = resolve(eval_spec(copy, MODEL))
    pool = tmp_path / "quiz" / "shots.jsonl"
    lines = pool.read_text().splitlines()
    pool.write_text("\n".join(reversed(lines)) + "\n")  # the same examples, another order: other prompts
    after = resolve(eval_spec(copy, MODEL))
    assert before.dataset.content_hash == after.dataset.content_hash
    assert before.dataset.prompt_hash is not None and before.dataset.prompt_hash != after.dataset.prompt_hash
    assert before.run_id() != after.run_id()


def test_fewshot_from_is_a_data_reference_in_the_spec(tmp_path: Path) -> None:
    spec = eval_spec(ITEMS, MODEL, prompt="five_shot", fewshot_from=ITEMS)
    assert spec.dataset.fewshot_from == str(ITEMS)
    with_pool = resolve(spec)
    itself = resolve(eval_spec(ITEMS, MODEL, prompt="five_shot"))
    assert with_pool.dataset.prompt_hash is not None and with_pool.run_id() != itself.run_id()
    plain = resolve(eval_spec(ITEMS, MODEL))
    assert plain.dataset.prompt_hash is None or plain.dataset.prompt_hash != with_pool.dataset.prompt_hash


def test_cli_and_python_build_the_same_spec_benchmark_run(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    assert main(["run", str(QUIZ), "--model", MODEL, "--shots", "2", "--prompt", "zero_shot", "-o", str(out),
                 "--no-history"]) == 0
    cli = read_manifest(out).spec
    log = proctor.eval(QUIZ, MODEL, shots=2, prompt="zero_shot", out=tmp_path / "py", record_history=False)
    assert cli is not None and log.manifest.spec is not None
    assert cli.scorer.mode == "logprob" and cli.run_id() == log.manifest.spec.run_id()


def _gsm8k_files(tmp: Path) -> Path:
    """openai/gsm8k's schema (question, a worked answer ending `#### N`); test answers 2, 6, 10…"""
    tmp.mkdir(parents=True)
    for split, n in (("train", 8), ("test", 6)):
        rows = [{"question": f"{split} {i}: Ann has {i + 2} apples and buys {3 * i}.",
                                              "answer": f"{i + 2} + {3 * i} = {4 * i + 2}.\n#### {4 * i + 2}"}
                                             for i in range(n)]
        (tmp / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp


def test_answer_rule_selects_gsm8ks_flexible_extract(tmp_path: Path) -> None:
    data = _gsm8k_files(tmp_path / "gsm8k")
    default = resolve(eval_spec("gsm8k", MODEL, data_file=data))
    assert default.scorer.answer_rule == "lm-eval-gsm8k-strict-match"
    chosen = resolve(eval_spec("gsm8k", MODEL, data_file=data, answer_rule="lm-eval-gsm8k-flexible-extract"))
    assert chosen.scorer.answer_rule == "lm-eval-gsm8k-flexible-extract" and chosen.run_id() != default.run_id()
    read = {}
    for rule in ("lm-eval-gsm8k-strict-match", "lm-eval-gsm8k-flexible-extract"):  # the first item's answer is 2
        out = tmp_path / rule
        assert main(["run", "gsm8k", "--data-file", str(data), "--model", "scripted:fixed=so she has 2 apples",
                     "--answer-rule", rule, "-o", str(out), "--no-history"]) == 0
        manifest = read_manifest(out)
        assert manifest.spec is not None and manifest.spec.scorer.answer_rule == rule
        overall = json.loads((out / "results.json").read_text())["overall"]
        read[rule] = (overall["n_no_answer"], overall["accuracy"])
    assert read["lm-eval-gsm8k-strict-match"] == (6, 0.0)  # no `#### N`: nothing read
    assert read["lm-eval-gsm8k-flexible-extract"] == (0, pytest.approx(1 / 6))  # the last number: one of six right


def test_one_plan_loads_a_task_per_shots_and_format() -> None:
    from proctor.run.pipeline import plan

    planned = plan([eval_spec(QUIZ, MODEL, mode="generate"), eval_spec(QUIZ, MODEL, mode="generate", shots=1),
                    eval_spec(QUIZ, MODEL, mode="generate", format="chat")])
    assert len({id(p.task) for p in planned}) == 3
    assert len({p.spec.dataset.prompt_hash for p in planned}) == 3 and len({p.spec.run_id() for p in planned}) == 3


def test_draw_extra_is_in_the_run_id(tmp_path: Path) -> None:
    """#41 item 2: `fewshot.draw_extra` draws other examples, so the same command must not resume the old run."""
    copy = tmp_path / "quiz.yaml"
    shutil.copytree(QUIZ.parent / "quiz", tmp_path / "quiz")
    text = QUIZ.read_text()
    copy.write_text(text.replace("selection: same_category}", "selection: seeded}"))
    seeded = resolve(eval_spec(copy, MODEL))
    copy.write_text(text.replace("selection: same_category}", "selection: seeded, draw_extra: true}"))
    assert resolve(eval_spec(copy, MODEL)).run_id() != seeded.run_id()
