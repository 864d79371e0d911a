"""LiveCodeBench with synthetic rows in the upstream schema: stdin/stdout and functional problems graded in the
real sandbox, the encoded private tests, `--after`, the authors' code extraction."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

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
