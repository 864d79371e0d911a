"""LiveCodeBench with synthetic rows in the upstream schema: stdin/stdout and functional problems graded in the
real sandbox, the encoded private tests, `--after`, the authors' code extraction."""

from __future__ import annotations

import base64
import json
import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from proctor.benchmarks import livecodebench as lcb
from proctor.benchmarks.hub import Rows
from proctor.data.formats.convert import question_to_item
from proctor.log.runlog import Outcome
from proctor.scoring.execute.scorer import execute


def _encoded(cases: list[dict[str, str]]) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


ROWS = [
    {"question_title": "Add", "question_content": "Read a and b, print a+b (synthetic).", "platform": "atcoder",
     "question_id": "syn1", "contest_id": "c1", "contest_date": "2024-08-01T00:00:00", "starter_code": "",
     "difficulty": "easy", "metadata": "{}",
     "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
     "private_test_cases": _encoded([{"input": "2 2\n", "output": "4\n", "testtype": "stdin"},
                                     {"input": "0.5 0.25\n", "output": "0.75\n", "testtype": "stdin"}])},
    {"question_title": "Twice", "question_content": "Return twice the list (synthetic).", "platform": "leetcode",
     "question_id": "syn2", "contest_id": "c2", "contest_date": "2025-03-01T00:00:00",
     "starter_code": "class Solution:\n    def twice(self, xs: List[int]) -> List[int]:\n        ",
     "difficulty": "medium", "metadata": json.dumps({"func_name": "twice"}),
     "public_test_cases": json.dumps([{"input": "[1, 2]", "output": "[2, 4]", "testtype": "functional"}]),
     "private_test_cases": json.dumps([{"input": "[]", "output": "[]", "testtype": "functional"}])},
]


def _items():
    return [question_to_item(q, lcb.NAME) for q in lcb.to_questions(Rows([dict(r) for r in ROWS]))]


def test_rows_decode_tests_and_dates() -> None:
    add, twice = _items()
    assert [t["input"] for t in add.metadata["tests"]] == ["1 2\n", "2 2\n", "0.5 0.25\n"]
    assert twice.metadata["func_name"] == "twice" and add.metadata["contest_date"] == "2024-08-01T00:00:00"
    assert lcb.LcbPrompts().messages(add, lcb.GENERIC)[1].content.startswith("### Question:\nRead a and b")


def test_pickled_tests_never_run_code() -> None:
    class Boom:
        def __reduce__(self):
            return (os.system, ("true",))

    evil = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(ValueError, match="private_test_cases"):
        lcb._tests(evil, "private_test_cases")


def test_extract_code_takes_the_last_fenced_block() -> None:
    assert lcb.extract_code("a\n```python\nx = 1\n```\nthen\n```\ny = 2\n```").text == "y = 2"
    assert lcb.extract_code("no code").source == "none"


def test_stdio_and_functional_problems_graded_in_the_sandbox(bwrap) -> None:
    add, twice = _items()
    replies = [
        (add, "```python\na, b = map(float, input().split())\nr = a + b\nprint(int(r) if r == int(r) else r)\n```"),
        (add, "```python\nprint(3)\n```"),  # right on the public test only: the first failing test ends it
        (twice, "```python\nclass Solution:\n    def twice(self, xs):\n        return tuple(x * 2 for x in xs)\n```"),
        (twice, "```python\nimport os\nos.system('true')\n```"),  # the guard removed os.system
    ]
    bench = lcb.LcbTests(test_timeout=2)
    verdicts = execute(bwrap, bench, [(item, bench.code(item, reply, False)) for item, reply in replies])
    assert [v.outcome for v in verdicts] == [Outcome.CORRECT, Outcome.WRONG, Outcome.CORRECT, Outcome.WRONG]
    tests = verdicts[1].details.get("tests")
    assert [t.passed for t in tests] == [True, False, False] and "not run" in tests[2].message


def test_after_keeps_problems_from_that_day(tmp_path) -> None:
    data = tmp_path / "lcb.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert [q.original_id for q in lcb.load(data, after="2025-01-01").dataset.questions] == ["syn2"]
    assert len(lcb.load(data).dataset.questions) == 2


# ---------------------------------------------------------------- lcb_runner's limits (#49 item 1)

UPSTREAM = next((p for p in (Path(__file__).resolve().parents[i] / "shared" / "upstream" for i in (3, 4)) if p.is_dir()),
                Path(__file__).resolve().parents[3] / "shared" / "upstream")
BIG = {**ROWS[0], "question_id": "syn3", "question_content": "Print 2**15000 (synthetic).",
       "public_test_cases": json.dumps([{"input": "\n", "output": "BIG\n", "testtype": "stdin"}]),
       "private_test_cases": json.dumps([])}


def _lcb_check() -> Any:
    """lcb_runner's `check_correctness` (compute_code_generation_metrics), which sets 50,000 digits on import."""
    if not (UPSTREAM / "LiveCodeBench" / "lcb_runner").is_dir():
        pytest.skip(f"needs {UPSTREAM / 'LiveCodeBench'} (../shared/upstream: lcb_runner)")
    digits = sys.get_int_max_str_digits()
    sys.path.insert(0, str(UPSTREAM / "LiveCodeBench"))
    try:
        from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness
    finally:
        sys.path.remove(str(UPSTREAM / "LiveCodeBench"))
        sys.set_int_max_str_digits(digits)
    return check_correctness


def _theirs(check: Any, item: Any, code: str, timeout: int) -> bool:
    tests = item.metadata["tests"]
    sample = {"input_output": json.dumps({"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests],
                                          "fn_name": item.metadata["func_name"]})}
    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(50000)  # as in lcb_runner's process, which its checker's process inherits
    try:
        results, _ = check(sample, code, timeout, debug=False)
    finally:
        sys.set_int_max_str_digits(digits)
    return all((r is True) or (not isinstance(r, bool) and r > 0) for r in results)


@pytest.mark.needs("bubblewrap")
def test_digits_and_the_modules_own_time_as_lcb_runner_sets_them(bwrap) -> None:
    check = _lcb_check()
    big = {**BIG, "public_test_cases": BIG["public_test_cases"].replace("BIG", _digits_of_2_15000())}
    twice = ROWS[1]
    cases = [(big, "print(2 ** 15000)"),  # 4,516 digits: over Python's 4,300
             (twice, "import time\ntime.sleep(2)\nclass Solution:\n    def twice(self, xs):\n        return [2 * x for x in xs]"),
             (twice, "class Solution:\n    def twice(self, xs):\n        return [2 * x for x in xs]")]
    items = [question_to_item(lcb.to_questions(Rows([dict(row)]))[0], lcb.NAME) for row, _ in cases]
    theirs = [_theirs(check, item, code, 1) for item, (_, code) in zip(items, cases)]  # 1 s: the module sleeps 2 s
    assert theirs == [True, False, True]
    jobs = [(item, lcb.extract_code(f"```python\n{code}\n```")) for item, (_, code) in zip(items, cases)]
    ours = execute(bwrap, lcb.LcbTests(test_timeout=1), jobs)
    assert [v.outcome is Outcome.CORRECT for v in ours] == theirs
    strict = execute(bwrap, lcb.LcbTests(exec_limits="proctor", test_timeout=1), jobs)
    assert [v.outcome is Outcome.CORRECT for v in strict] == [False, True, True]


def _digits_of_2_15000() -> str:
    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(2 ** 15000)
    finally:
        sys.set_int_max_str_digits(digits)
