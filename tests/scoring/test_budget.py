"""Issue 51 item 5: every grader call runs under a time and a size budget (`proctor.scoring.budget`). A grader that
hangs (pure Python or in C), raises, or is handed a huge reply gives that sample the named outcome no_answer /
"grader-gave-up" with the reason, never a crash or a hang; a resume does not grade it again."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from benchmark_replay import run, script
from nltk_punkt import punkt_dir

from proctor.data.records import Item
from proctor.log.runlog import Outcome
from proctor.scoring import budget, scorers
from proctor.scoring.budget import GAVE_UP, GaveUp, within_budget
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.scorers import score_item
from proctor.util.errors import ProctorError


def _spin() -> None:
    while True:
        try:
            sum(range(1000))
        except Exception:  # noqa: BLE001, S110 - a grader that swallows everything it can
            pass


def _grade_spinner(got: list[str]) -> None:
    try:
        within_budget("spinner", _spin, text="", seconds=0.5)
    except GaveUp as e:
        got.append(e.why)


def test_a_pure_python_hang_is_stopped_in_the_main_thread_and_in_a_worker_thread() -> None:
    for where in ("main", "thread"):
        got: list[str] = []
        start = time.monotonic()
        if where == "main":
            _grade_spinner(got)
        else:
            t = threading.Thread(target=_grade_spinner, args=(got,))
            t.start()
            t.join(10)
        assert got == ["spinner: no verdict within 0.5 s"] and time.monotonic() - start < 5, where
    time.sleep(1)  # nothing raised later in this thread: the watchdog let go


def test_size_raises_and_proctor_errors() -> None:
    with pytest.raises(GaveUp, match="reply of 1,000,001 characters, over the graders' 1,000,000"):
        within_budget("g", len, "x", text="x" * (budget.GRADER_MAX_CHARS + 1))

    def deep() -> None:
        json.loads("[" * 100_000 + "]" * 100_000)

    with pytest.raises(GaveUp, match="g: raised RecursionError"):
        within_budget("g", deep, text="")

    def missing() -> None:
        raise ProctorError("install it")

    with pytest.raises(ProctorError, match="install it"):  # a grader not installed still stops the run in one line
        within_budget("g", missing, text="")


def test_the_budget_is_cheap_for_a_normal_reply() -> None:
    start = time.perf_counter()
    for _ in range(2000):
        assert within_budget("g", len, "abc", text="abc") == 3
    assert (time.perf_counter() - start) / 2000 < 0.001  # about 10 µs a call measured


# ---------------------------------------------------------------- MathArena: AIME 2026 replies that hung 300 s

needs_matharena = pytest.mark.needs("matharena")
HANGS = {"tower": "So the count is $\\boxed{2^{2^{2^{2^{2^{2}}}}}}$.",
         "factorial": "Hence $\\boxed{1000000!}$.",
         "exponent": "The answer is $\\boxed{9^{9^{9}}}$."}


def _item(answer: str = "42") -> Item:
    return Item(identifier="q", modality="single-value", prompt="Find y.", response=answer)  # type: ignore[arg-type]


@needs_matharena
@pytest.mark.parametrize("reply", list(HANGS.values()), ids=list(HANGS))
def test_matharena_replies_that_hung_give_up_within_the_budget(reply: str, monkeypatch: pytest.MonkeyPatch) -> None:
    within_budget("warm", len, "", text="", isolate=True)  # the grader process started (its imports: seconds)
    score_item(_item(), "\\boxed{42}", ANSWER_RULES["matharena"])
    monkeypatch.setattr(budget, "GRADER_SECONDS", 3.0)
    start = time.monotonic()
    verdict = score_item(_item(), reply, ANSWER_RULES["matharena"])
    assert time.monotonic() - start < 20
    assert verdict.outcome is Outcome.NO_ANSWER and verdict.score == 0.0 and verdict.extraction_rule == GAVE_UP
    assert verdict.details.rejected == "matharena: no verdict within 3 s"
    assert score_item(_item(), "\\boxed{42}", ANSWER_RULES["matharena"]).outcome is Outcome.CORRECT  # started again


@needs_matharena
def test_a_run_over_hanging_replies_finishes_and_its_resume_grades_nothing_again(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "aime.jsonl"
    data.write_text("".join(json.dumps({"problem_idx": i + 1, "problem": f"Problem {i + 1}.", "answer": 42,
                                        "problem_type": ["Algebra"]}) + "\n" for i in range(4)))
    replies = {f"aime-2026.{i + 1}": r for i, r in enumerate([*HANGS.values(), "\\boxed{42}"])}
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'aime-2026', data, 'matharena', replies)}"
    monkeypatch.setattr(budget, "GRADER_SECONDS", 3.0)
    ran = run(capsys, tmp_path, "aime-2026", data, model, "run", "--no-second-ask")  # the grading alone
    assert ran.code == 0, ran.err
    outcomes = {k: (s["outcome"], s["extraction_rule"]) for k, s in ran.samples.items()}
    assert outcomes == {"aime-2026.1": ("no_answer", GAVE_UP), "aime-2026.2": ("no_answer", GAVE_UP),
                        "aime-2026.3": ("no_answer", GAVE_UP), "aime-2026.4": ("correct", "matharena")}
    calls: list[object] = []
    monkeypatch.setattr(scorers, "within_budget", lambda *a, **k: calls.append(a))
    again = run(capsys, tmp_path, "aime-2026", data, model, "run", "--no-second-ask")
    assert again.code == 0 and calls == [], again.err  # every sample is done: none graded again


@needs_matharena
def test_the_second_ask_check_gives_up_within_the_budget_and_asks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor.scoring.second_ask import matharena_no_answer

    within_budget("warm", len, "", text="", isolate=True)  # the grader process started (its imports: seconds)
    monkeypatch.setattr(budget, "GRADER_SECONDS", 3.0)
    start = time.monotonic()
    assert matharena_no_answer(next(iter(HANGS.values())))  # its parser read no answer in time: ask again
    assert time.monotonic() - start < 20
    assert not matharena_no_answer("\\boxed{42}")


# ---------------------------------------------------------------- IFEval: a 100k-deep JSON reply, a 1M-sentence reply

@pytest.fixture
def punkt(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    import nltk

    root = punkt_dir(tmp_path_factory.mktemp("nltk"))
    monkeypatch.setattr(nltk.data, "path", [str(root), *nltk.data.path])
    return root



def test_ifeval_replies_its_checkers_crashed_on_are_each_a_named_outcome(
        punkt: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 100k-deep JSON reply was a RecursionError in lm-eval's json_format checker, a 1M-sentence reply stopped the
    run through nltk; every resume crashed again on the cached reply. Now: no_answer, each instruction not followed,
    the reason kept; the resume exits 0."""
    rows = [{"key": i, "prompt": f"Reply in JSON {i}.", "instruction_id_list": [iid], "kwargs": [kw]}
            for i, (iid, kw) in enumerate([("detectable_format:json_format", {}),
                                            ("length_constraints:number_sentences",
                                             {"relation": "less than", "num_sentences": 3}),
                                            ("detectable_format:json_format", {})])]
    data = tmp_path / "ifeval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    replies = {"ifeval.0": "[" * 100_000 + "]" * 100_000, "ifeval.1": "It is. " * 1_000_000, "ifeval.2": '{"a": 1}'}
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'ifeval', data, 'zero_shot', replies)}"
    ran = run(capsys, tmp_path, "ifeval", data, model, "run")
    assert ran.code == 0 and "Traceback" not in ran.err, ran.err
    got = {k: (s["outcome"], s["extraction_rule"], s["details"].get("rejected")) for k, s in ran.samples.items()}
    assert got["ifeval.0"] == ("no_answer", GAVE_UP, ("lm-eval-ifeval: raised RecursionError: maximum recursion "
                                                     "depth exceeded while decoding a JSON array from a unicode string"))
    assert got["ifeval.1"] == ("no_answer", GAVE_UP, ("lm-eval-ifeval: reply of 7,000,000 characters, over the "
                                                     "graders' 1,000,000"))
    assert got["ifeval.2"][0] == "correct"
    assert ran.samples["ifeval.0"]["details"]["instructions"] == [
        {"id": "detectable_format:json_format", "strict": False, "loose": False, "counted_strict": None,
         "counted_loose": None}]
    metrics = json.loads((ran.run_dir / "results.json").read_text())["metrics"]
    assert metrics["ifeval_prompt_level_strict_acc"]["n"] == 3  # counted, as the accuracy counts them
    again = run(capsys, tmp_path, "ifeval", data, model, "run")
    assert again.code == 0 and "Traceback" not in again.err, again.err
