"""proctor's sandboxed LiveCodeBench verdicts against LiveCodeBench's own evaluator (`lcb_runner/evaluation/
testing_util.py` `run_test`, run as its `check_correctness` runs it: a process per program, the global timeout
(6 + 1) s per test + 5 s; correct when every result is > 0, as `pass_k_utils` counts), item by item, on synthetic
problems (stdin/stdout and functional) and replayed programs that probe each grading rule.

    git clone https://github.com/LiveCodeBench/LiveCodeBench   # or any checkout at 28fef95
    PYTHONPATH=src python bench/lcb_agreement.py --testing-util LiveCodeBench/lcb_runner/evaluation/testing_util.py

Prints each case's two verdicts and the agreement; exit 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import sys
from typing import Any

from proctor.benchmarks import livecodebench as lcb
from proctor.benchmarks.hub import Rows
from proctor.data.formats.convert import question_to_item
from proctor.scoring.execute.sandbox import sandbox_for
from proctor.scoring.execute.scorer import execute

STDIO = {"question_title": "t", "question_content": "Print the sum of the numbers on the line (synthetic).",
         "platform": "atcoder", "question_id": "s1", "contest_id": "c", "contest_date": "2025-01-01T00:00:00",
         "starter_code": "", "difficulty": "easy", "metadata": "{}",
         "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"},
                                          {"input": "0.5 0.25\n", "output": "0.75\n", "testtype": "stdin"}]),
         "private_test_cases": json.dumps([{"input": "10 20 30\n", "output": "60\n", "testtype": "stdin"}])}
FUNC = {"question_title": "t", "question_content": "Return the list doubled (synthetic).", "platform": "leetcode",
        "question_id": "f1", "contest_id": "c", "contest_date": "2025-01-01T00:00:00",
        "starter_code": "class Solution:\n    def double(self, xs: List[int]) -> List[int]:\n        ",
        "difficulty": "easy", "metadata": json.dumps({"func_name": "double"}),
        "public_test_cases": json.dumps([{"input": "[1, 2]", "output": "[2, 4]", "testtype": "functional"}]),
        "private_test_cases": json.dumps([{"input": "[]", "output": "[]", "testtype": "functional"},
                                          {"input": "[5]", "output": "[10]", "testtype": "functional"}])}
SUM = "print(sum(map(float, input().split())))"
CASES: list[tuple[dict[str, Any], str, str]] = [
    (STDIO, "float sum (Decimal compare: 3.0 vs 3)", SUM),
    (STDIO, "int-aware sum", "xs = input().split()\ns = sum(map(float, xs))\nprint(int(s) if s == int(s) else s)"),
    (STDIO, "main guard", ("def main():\n    xs = list(map(float, input().split()))\n    s = sum(xs)\n"
                          "    print(int(s) if s == int(s) else s)\n\nif __name__ == '__main__':\n    main()")),
    (STDIO, "sys.stdin.read", ("import sys\nxs = sys.stdin.read().split()\ns = sum(map(float, xs))\n"
                              "print(int(s) if s == int(s) else s)")),
    (STDIO, "sys.stdin.readline", ("import sys\nxs = sys.stdin.readline().split()\ns = sum(map(float, xs))\n"
                                  "print(int(s) if s == int(s) else s)")),
    (STDIO, "open(0)", "xs = open(0).read().split()\ns = sum(map(float, xs))\nprint(int(s) if s == int(s) else s)"),
    (STDIO, "buffer", ("import sys\nxs = sys.stdin.buffer.read().split()\ns = sum(map(float, xs))\n"
                      "print(int(s) if s == int(s) else s)")),
    (STDIO, "iterating stdin", ("import sys\nfor line in sys.stdin:\n    s = sum(map(float, line.split()))\n"
                               "    print(int(s) if s == int(s) else s)")),
    (STDIO, "exit after printing", "s = sum(map(float, input().split()))\nprint(int(s) if s == int(s) else s)\nexit()"),
    (STDIO, "quit (guarded)", "s = sum(map(float, input().split()))\nprint(int(s) if s == int(s) else s)\nquit()"),
    (STDIO, "extra blank lines", "s = sum(map(float, input().split()))\nprint(int(s) if s == int(s) else s)\nprint()"),
    (STDIO, "extra line", "s = sum(map(float, input().split()))\nprint(int(s) if s == int(s) else s)\nprint(1)"),
    (STDIO, "wrong", "print(0)"),
    (STDIO, "runtime error", "raise ValueError('no')"),
    (STDIO, "syntax error", "print(("),
    (STDIO, "os.system (guarded)", "import os\nos.system('true')\nprint(3)"),
    (STDIO, "reading past the input", "input()\ninput()\nprint(3)"),
    (STDIO, "endless loop", "while True:\n    pass"),
    (FUNC, "right", "class Solution:\n    def double(self, xs):\n        return [2 * x for x in xs]"),
    (FUNC, "tuple", "class Solution:\n    def double(self, xs):\n        return tuple(2 * x for x in xs)"),
    (FUNC, "wrong", "class Solution:\n    def double(self, xs):\n        return xs"),
    (FUNC, "missing method", "class Solution:\n    def other(self, xs):\n        return xs"),
    (FUNC, "plain function", "def double(xs):\n    return [2 * x for x in xs]"),
    (FUNC, "raises", "class Solution:\n    def double(self, xs):\n        raise KeyError(1)"),
    (FUNC, "uses the header's imports", ("class Solution:\n    def double(self, xs: List[int]):\n"
                                        "        return list(map(mul, xs, repeat(2, len(xs))))")),
]


def _run(path: str, sample: dict[str, Any], code: str, out: Any) -> None:
    spec = importlib.util.spec_from_file_location("lcb_testing_util", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out.append(module.run_test(sample, test=code, debug=False, timeout=6)[0])


def reference(path: str, row: dict[str, Any], code: str) -> bool:
    """LiveCodeBench's verdict (its check_correctness, in a process of its own)."""
    item = question_to_item(lcb.to_questions(Rows([dict(row)]))[0], lcb.NAME)
    tests = item.metadata["tests"]
    sample = {"input_output": json.dumps({"inputs": [t["input"] for t in tests],
                                          "outputs": [t["output"] for t in tests],
                                          "fn_name": item.metadata["func_name"]})}
    with multiprocessing.Manager() as manager:
        result = manager.list()
        p = multiprocessing.Process(target=_run, args=(path, sample, code, result))
        p.start()
        p.join(timeout=(6 + 1) * len(tests) + 5)
        if p.is_alive():
            p.kill()
        res = list(result[0]) if result else [-1] * len(tests)
    return all((r is True) or (not isinstance(r, bool) and r > 0) for r in res)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--testing-util", required=True, help="lcb_runner/evaluation/testing_util.py")
    args = parser.parse_args()
    bench = lcb.LcbTests()
    items = [(question_to_item(lcb.to_questions(Rows([dict(row)]))[0], lcb.NAME), code) for row, _, code in CASES]
    ours = execute(sandbox_for(False), bench, [(item, lcb.extract_code(f"```python\n{code}\n```"))
                                               for item, code in items])
    bad = 0
    for (row, name, code), v in zip(CASES, ours):
        ref = reference(args.testing_util, row, code)
        got = v.outcome.value == "correct"
        bad += ref != got
        kind = "functional" if row is FUNC else "stdio"
        print(f"{'ok  ' if ref == got else 'DIFF'} {kind:10s} {name:40s} lcb={'pass' if ref else 'fail'} "
              f"proctor={'pass' if got else 'fail'}")
    print(f"agreement: {len(CASES) - bad}/{len(CASES)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
