"""MathArena's competitions: AIME 2026 and HMMT February rows (hub schema and MathArena's on-disk layout) run end
to end with MathArena's prompt; HMMT's expression answers are graded by MathArena's own parser (the installed
`matharena` package, called here as the oracle); a run is refused in one line when it is not installed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_replay import run, script

from proctor.benchmarks import load_task
from proctor.benchmarks.registry import BUILTINS

needs_matharena = pytest.mark.needs("matharena")  # MathArena's parser, the oracle (not on PyPI)

AIME_INSTRUCTION = "Put your final answer within \\boxed{}.\nThe answer is an integer between 0 and 999 inclusive."
HMMT_ROWS = [  # (answer, reply): equivalent forms, lists, wrong, none
    ("\\frac{9\\sqrt{23}}{23}", "Rationalising, $\\boxed{\\frac{9}{\\sqrt{23}}}$."),
    ("2^{25} \\cdot 26!", "So the count is \\boxed{26! \\cdot 2^{25}}"),
    ("1-\\frac{2}{\\pi}", "The probability is $\\boxed{1 - 2/\\pi}$"),
    ("\\sqrt{6}-\\sqrt{2}", "Hence \\boxed{\\sqrt{2}}."),
    ("-1, 2", "The roots are $\\boxed{2}$ and $\\boxed{-1}$."),
    ("103", "I could not finish."),
]


def _rows(answers: list[str | int]) -> str:
    return "".join(json.dumps({"problem_idx": i + 1, "problem": f"Synthetic problem {i + 1}: find $y$.\n",
                               "answer": a, "problem_type": ["Algebra", "Geometry"]}) + "\n"
                   for i, a in enumerate(answers))


@pytest.fixture
def aime(tmp_path: Path) -> Path:
    path = tmp_path / "aime.jsonl"
    path.write_text(_rows([7, 250, 999]))
    return path


@pytest.fixture
def hmmt(tmp_path: Path) -> Path:
    path = tmp_path / "hmmt.jsonl"
    path.write_text(_rows([a for a, _ in HMMT_ROWS]))
    return path


def test_aime_2026_uses_matharenas_prompt_and_reads_the_matharena_directory(tmp_path: Path, aime: Path) -> None:
    task = load_task("aime-2026", data_file=aime)
    assert task.prompts.kinds == ("matharena",) and task.items[0].category == "Algebra"
    (message,) = task.prompts.messages(task.items[0], "matharena")
    assert message.content == AIME_INSTRUCTION + "\n\nSynthetic problem 1: find $y$.\n"  # the problem as held
    folder = tmp_path / "aime_2026"
    (folder / "problems").mkdir(parents=True)
    (folder / "answers.csv").write_text("id,answer\n1,7\n2,250\n")
    for i in (1, 2):
        (folder / "problems" / f"{i}.tex").write_text(f"Synthetic problem {i}: find $y$.\n")
    on_disk = load_task("aime-2026", data_file=folder)
    assert [it.best_answer for it in on_disk.items] == ["7", "250"]
    assert on_disk.prompts.messages(on_disk.items[0], "matharena") == task.prompts.messages(task.items[0], "matharena")


AIME_REPLIES = {"aime-2026.1": "so \\boxed{007}", "aime-2026.2": "The answer is 250.", "aime-2026.3": "\\boxed{+999}"}


@needs_matharena
def test_aime_2026_end_to_end_by_matharenas_parser(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   aime: Path) -> None:
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'aime-2026', aime, 'matharena', AIME_REPLIES)}"
    ran = run(capsys, tmp_path, "aime-2026", aime, model, "run", "--no-second-ask")  # the parser alone
    assert ran.code == 0, ran.err
    assert {k: s["outcome"] for k, s in ran.samples.items()} == {  # MathArena reads \boxed{+999} as 999
        "aime-2026.1": "correct", "aime-2026.2": "correct", "aime-2026.3": "correct"}
    assert (ran.manifest["spec"]["scorer"]["prompt_kind"], ran.manifest["spec"]["scorer"]["answer_rule"]) == ("matharena", "matharena")


def test_aime_2026_with_llmwcs_rule_needs_no_install(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    aime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matharena.parser", None)  # as if MathArena were not installed
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'aime-2026', aime, 'matharena', AIME_REPLIES)}"
    ran = run(capsys, tmp_path, "aime-2026", aime, model, "run", "--answer-rule", "matharena-aime")
    assert ran.code == 0, ran.err
    assert {k: s["outcome"] for k, s in ran.samples.items()} == {  # llm-wc's rule: a digit string only
        "aime-2026.1": "correct", "aime-2026.2": "correct", "aime-2026.3": "wrong"}
    assert ran.manifest["spec"]["scorer"]["answer_rule"] == "matharena-aime"


def test_an_aime_answer_outside_0_999_names_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_rows([7, 1000]))
    ran = run(capsys, tmp_path, "aime-2026", bad, "scripted:first", "bad")
    assert ran.code == 2 and f"{bad}:2: row: answer: 1000 is outside 0-999" in ran.err and "Traceback" not in ran.err


def test_hmmt_prompt_and_registry(hmmt: Path) -> None:
    assert {n: BUILTINS[n].source.repo for n in ("hmmt-feb-2025", "hmmt-feb-2026")} == {
        "hmmt-feb-2025": "MathArena/hmmt_feb_2025", "hmmt-feb-2026": "MathArena/hmmt_feb_2026"}
    assert BUILTINS["hmmt-feb-2026"].answer_rules == {"matharena": "matharena"}
    task = load_task("hmmt-feb-2025", data_file=hmmt)
    (message,) = task.prompts.messages(task.items[0], "matharena")
    assert message.content == "Put your final answer within \\boxed{}.\n\nSynthetic problem 1: find $y$.\n"
    assert task.items[1].best_answer == "2^{25} \\cdot 26!"


@needs_matharena
def test_hmmt_end_to_end_verdicts_are_matharenas(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                hmmt: Path) -> None:
    from matharena import parser  # MathArena's own grader path for a final-answer competition (non-strict)

    def oracle(reply: str, gold: str) -> bool:
        answer, _ = parser.extract_answer(reply, strict_parsing=False, parse=True, list_answer="," in gold)
        return bool(parser.check_answers(answer, parser.parse_answer(gold, list_answer="," in gold)[0]))

    replies = {f"hmmt-feb-2025.{i + 1}": r for i, (_, r) in enumerate(HMMT_ROWS)}
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'hmmt-feb-2025', hmmt, 'matharena', replies)}"
    ran = run(capsys, tmp_path, "hmmt-feb-2025", hmmt, model, "run", "--no-second-ask")
    assert ran.code == 0, ran.err
    expected = {f"hmmt-feb-2025.{i + 1}": oracle(r, a) for i, (a, r) in enumerate(HMMT_ROWS)}
    assert {k: s["outcome"] == "correct" for k, s in ran.samples.items()} == expected
    assert sum(expected.values()) >= 3  # equivalent expressions are credited
    assert (ran.manifest["spec"]["scorer"]["prompt_kind"], ran.manifest["spec"]["scorer"]["answer_rule"]) == ("matharena", "matharena")


def test_hmmt_without_matharena_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, hmmt: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matharena.parser", None)  # as if it were not installed
    ran = run(capsys, tmp_path, "hmmt-feb-2026", hmmt, "scripted:first", "none")
    assert ran.code == 2 and "MathArena's own parser" in ran.err and "git+https://github.com/eth-sri/matharena@" in ran.err
    assert len(ran.err.strip().splitlines()) == 1 and "Traceback" not in ran.err


def test_hmmt_missing_column_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"problem_idx": 1, "problem": "p"}) + "\n")
    ran = run(capsys, tmp_path, "hmmt-feb-2025", bad, "scripted:first", "bad")
    assert ran.code == 2 and "missing upstream column(s) 'answer'" in ran.err and "Traceback" not in ran.err
