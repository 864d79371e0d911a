"""LiveCodeBench code generation (livecodebench/code_generation_lite, pinned `release_v6`), graded as its own
evaluator grades (LiveCodeBench/LiveCodeBench@28fef95, lcb_runner/evaluation/testing_util.py `run_test`).

Upstream columns (test split): question_title, question_content, platform, question_id, contest_id,
contest_date (ISO), starter_code, difficulty, public_test_cases (JSON), private_test_cases (JSON, or base64 of
zlib of a pickled JSON string), metadata (JSON; `func_name` for LeetCode's functional problems). The prompt is
LiveCodeBench's generic one (`get_generic_question_template_answer`, its SYSTEM_MESSAGE_GENERIC as the system
message); the code is the text between the last two lines holding ``` (`extract_code`; none: no code).

Grading, as `run_test` does it, in proctor's sandbox: the public then the private tests; stdin/stdout problems
have their `if __name__ == '__main__':` block unwrapped and their statements wrapped in a function called once
per test with standard input mocked, the output compared line by line after stripping, as Decimals when the
lines differ as text; functional problems call `Solution().<func_name>` (or the module's function) on the JSON
arguments, a tuple read as a list; 6 s per test (SIGALRM); the first failing test ends the grading. Its
`reliability_guard` (which removes os.system, os.kill, subprocess.Popen, quit and others) is applied too, and by
default (`--exec-limits authors`) lcb_runner's limits: 6 s on the module's own code, 50,000-digit integers.

`after` (`--after DATE`) keeps the problems whose contest date is on or after DATE: a model is evaluated only
on problems published after its training cutoff. Every item records its `contest_date`.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..core.model import Message
from ..core.spec import ExecLimits
from ..data.prompts import KindDefaults
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.execute.extract import Code
from ..scoring.execute.sandbox import Limits, Program
from ..scoring.execute.scorer import DEFAULT_EXEC_LIMITS, Launch, containment, launch
from ..util.errors import InputError
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch

NAME = "livecodebench"
RELEASE = "release_v6"
SOURCE = HubSource("livecodebench/code_generation_lite", split="test", config=RELEASE)
SIZE = 1055
COLUMNS = ("question_title", "question_content", "platform", "question_id", "contest_date", "starter_code",
           "difficulty", "public_test_cases", "private_test_cases", "metadata")
TEST_TIMEOUT = 6  # seconds per test, LiveCodeBench's default
INT_DIGITS = 50000  # the integer-string digit limit lcb_runner sets (Python's default: 4,300)

SYSTEM = ("You are an expert Python programmer. You will be given a question (problem specification) and will "
          "generate a correct Python program that matches the specification and passes all tests.")
WITH_STARTER = ("You will use the following starter code to write the solution to the problem and enclose your code "
                "within delimiters.")
WITHOUT_STARTER = ("Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test "
                   "on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python "
                   "program runs, it reads the inputs, runs the algorithm and writes output to STDOUT.")
GENERIC = "lcb-generic"

# The grading code run in the sandbox before the tests (LiveCodeBench's semantics, see the module docstring).
HARNESS = r'''
import ast as _ast, json as _json, sys as _sys
from decimal import Decimal as _Decimal
from io import StringIO as _StringIO
from types import ModuleType as _ModuleType
from unittest.mock import patch as _patch, mock_open as _mock_open

_HEADER = "".join("from %s import *\n" % m for m in _MODULES) + "".join("import %s\n" % m for m in _MODULES[:-4]) \
    + "import sys\nimport json\nsys.setrecursionlimit(50000)\n"


def _guard():
    import builtins, os, shutil, subprocess
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in _OS_REMOVED:
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        _sys.modules[name] = None


def _unwrap_main(code):
    try:
        tree = _ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, _ast.If) and _ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = _ast.unparse(tree.body[:-1]) + "\n" + _ast.unparse(last.body)
    except Exception:
        pass
    return code


def _as_function(code):
    try:
        tree = _ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (_ast.Import, _ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (_ast.Import, _ast.ImportFrom))]
        fn = _ast.FunctionDef(name="wrapped_function", args=_ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                              kw_defaults=[], defaults=[]), body=others, decorator_list=[], lineno=-1)
        return _HEADER + "\n" + _ast.unparse(imports) + "\n" + _ast.unparse(fn)
    except Exception:
        return code


class _Buffer:
    def __init__(self, inputs):
        self.inputs = inputs.encode("utf-8")

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self.inputs.split(b"\n")[0] + b"\n"


class _Stdin:
    def __init__(self, inputs):
        self.inputs = inputs
        self._io = _StringIO(inputs)
        self.buffer = _Buffer(inputs)

    def read(self, *args):
        return self.inputs

    def readline(self, *args):
        return self._io.readline(*args)

    def readlines(self, *args):
        return self.inputs.split("\n")

    def __getattr__(self, name):
        return getattr(self._io, name)


def _call(method, inputs):
    lines = iter(inputs.split("\n"))

    @_patch("builtins.open", _mock_open(read_data=inputs))
    @_patch("sys.stdin", _Stdin(inputs))
    @_patch("sys.stdin.readline", lambda *args: next(lines))
    @_patch("sys.stdin.readlines", lambda *args: inputs.split("\n"))
    @_patch("sys.stdin.read", lambda *args: inputs)
    def inner(m):
        try:
            return m()
        except SystemExit:
            pass
    return inner(method)


def _prepare(code, fn_name):
    global _METHOD
    module = _ModuleType("tmp_sol", "")
    if fn_name is None:
        exec(_as_function(_unwrap_main(code)), module.__dict__)
        _METHOD = getattr(module, "wrapped_function")
    else:
        code = _HEADER + "\n\n" + code
        exec(code, module.__dict__)
        _METHOD = getattr(module.Solution() if "class Solution" in code else module, fn_name)


def _lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line):
    try:
        return [_Decimal(x) for x in line.split()]
    except Exception:
        return None


def _stdio(inputs, expected):
    out, saved = _StringIO(), _sys.stdout
    _sys.stdout = out
    try:
        _call(_METHOD, inputs)
    finally:
        _sys.stdout = saved
    got, want = _lines(out.getvalue()), _lines(expected)
    if len(got) != len(want):
        raise AssertionError("Wrong answer: mismatched output length")
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b and (_decimals(a) is None or _decimals(b) is None or _decimals(a) != _decimals(b)):
            raise AssertionError("Wrong answer at line %d" % i)


def _functional(inputs, expected):
    args = [_json.loads(line) for line in inputs.split("\n")]
    got = _METHOD(*args)
    if isinstance(got, tuple):
        got = list(got)
    if got != _json.loads(expected):
        raise AssertionError("Wrong Answer")
'''
MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
           "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
OS_REMOVED = ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
              "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
              "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir")


def extract_code(reply: str) -> Code:
    """LiveCodeBench's `extract_code`: the lines between the last two lines holding ``` (fewer: no code)."""
    lines = reply.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return Code("", "none")
    return Code("\n".join(lines[fences[-2] + 1: fences[-1]]), "fenced")


@dataclass(frozen=True)
class LcbTests:
    """Each problem's tests run as LiveCodeBench's `run_test` runs them (see the module docstring). Under
    `exec_limits` "authors" (the default) with lcb_runner's limits: integers printed and read up to 50,000 digits
    (`sys.set_int_max_str_digits(50000)`, set by its `compute_code_generation_metrics`), 6 s for the module's own
    code (`compile_code`'s alarm) and per test, the global (6 + 1) s per test + 5 s, output written to nothing,
    and only the host's containment beyond; "proctor": Python's 4,300 digits, no alarm on the module's code,
    1 GB and 16 MB of output."""

    exec_limits: ExecLimits = DEFAULT_EXEC_LIMITS
    test_timeout: int = TEST_TIMEOUT

    @property
    def limits(self) -> Limits:
        return Limits(cpu_s=60, wall_s=60)

    def code(self, item: Item, reply: str, completion: bool) -> Code:
        return extract_code(reply)

    def tests(self, item: Item) -> list[tuple[str, str]]:
        check = "_stdio" if item.metadata.get("func_name") is None else "_functional"
        return [(f"test {i + 1}", f"{check}({t['input']!r}, {t['output']!r})")
                for i, t in enumerate(item.metadata["tests"])]

    def launch(self, item: Item, code: Code) -> tuple[Program, str]:
        program = (f"_MODULES = {MODULES!r}\n_OS_REMOVED = {OS_REMOVED!r}\n{HARNESS}\n_guard()\n"
                   f"_prepare({code.text!r}, {item.metadata.get('func_name')!r})\n")
        if self.exec_limits == "proctor":
            return launch(program, self.tests(item), Launch(stop_on_failure=True, test_timeout=self.test_timeout))
        return launch(program, self.tests(item), Launch(
            stop_on_failure=True, test_timeout=self.test_timeout, program_timeout=self.test_timeout,
            prelude=f"import sys\nsys.set_int_max_str_digits({INT_DIGITS})\n", swallow="output"))

    def limits_for(self, item: Item) -> Limits:
        """LiveCodeBench's global timeout: (6 + 1) s per test + 5 s."""
        n = len(item.metadata["tests"])
        wall = (self.test_timeout + 1) * n + 5
        if self.exec_limits == "authors":
            return containment(wall)
        return Limits(cpu_s=wall, wall_s=wall)


@dataclass
class LcbPrompts:
    """`lcb-generic` (the only kind, the authors'): LiveCodeBench's generic prompt and system message."""

    kinds: tuple[str, ...] = (GENERIC,)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("system", SYSTEM), Message("user", prompt_text(item.prompt, item.metadata.get("starter_code"))))

    def request_defaults(self, kind: str) -> KindDefaults:
        return KindDefaults()

    def logprob_context(self, item: Item) -> str:
        return item.prompt

    def template_hash(self, kind: str) -> str:
        return text_hash(NAME, SYSTEM, WITH_STARTER, WITHOUT_STARTER)


def prompt_text(question: str, starter: Any) -> str:
    """`get_generic_question_template_answer`."""
    text = f"### Question:\n{question}\n\n"
    if starter:
        text += f"### Format: {WITH_STARTER}\n```python\n{starter}\n```\n\n"
    else:
        text += f"### Format: {WITHOUT_STARTER}\n```python\n# YOUR CODE HERE\n```\n\n"
    return text + "### Answer: (use the provided format with backticks)\n\n"


def load(data_file: str | Path | None = None, seed: int = 0, after: str | None = None) -> Loaded:
    """The problems of the pinned release; `after`: only those whose contest date is on or after it."""
    rows = fetch(SOURCE, data_file)
    questions = to_questions(rows)
    if after is not None:
        cutoff = parse_date(after)
        questions = [q for q in questions if date.fromisoformat(q.metadata["contest_date"][:10]) >= cutoff]
    dataset = Dataset(name=NAME, description="LiveCodeBench code generation: recent contest problems, executed.",
                      questions=questions, prompts={},
                      metadata={"source": SOURCE.repo, "release": RELEASE, "revision": rows.provenance.get("revision"),
                                "after": after})
    provenance = {**rows.provenance, **({"after": after} if after is not None else {})}
    return Loaded(dataset=dataset, prompts=LcbPrompts(), provenance=provenance, code=LcbTests())


def parse_date(value: str) -> date:
    """A `--after` date (YYYY-MM-DD)."""
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise InputError.at("--after", f"{value!r} is not a date (YYYY-MM-DD)") from None


def to_questions(rows: Rows) -> list[Question]:
    return [q.model_copy(update={"id": i}) for i, q in enumerate(convert_rows(rows, COLUMNS, _question))]


def _question(row: dict[str, Any]) -> Question:
    public = _tests(row["public_test_cases"], "public_test_cases")
    private = _tests(row["private_test_cases"], "private_test_cases")
    meta = (json.loads(row["metadata"]) if isinstance(row["metadata"], str) else row["metadata"]) or {}
    if not isinstance(meta, dict):
        raise TypeError(f"metadata: expected a JSON object, got {type(meta).__name__}")
    if not isinstance(meta.get("func_name"), str | None):
        raise TypeError(f"metadata.func_name: expected a function's name, got {meta['func_name']!r}")
    when = row["contest_date"]
    when = when.isoformat() if isinstance(when, datetime) else str(when)
    datetime.fromisoformat(when)  # a ValueError names the row
    return Question(id=0, original_id=str(row["question_id"]), question=str(row["question_content"]), choices={},
                    answer="<executed>", category=str(row["platform"]), difficulty=None,
                    metadata={"question_id": str(row["question_id"]), "title": row["question_title"],
                              "contest_id": row.get("contest_id"), "contest_date": when,
                              "difficulty": row["difficulty"], "starter_code": row["starter_code"] or "",
                              "func_name": meta.get("func_name"), "tests": public + private})


def _tests(value: Any, column: str) -> list[dict[str, str]]:
    """A test-case column: JSON, or LiveCodeBench's base64(zlib(pickle(JSON text))) read by an unpickler that
    builds nothing but strings (data never runs code)."""
    if isinstance(value, list):
        cases = value
    else:
        try:
            cases = json.loads(value)
        except ValueError:
            try:
                text = _StringsOnly(io.BytesIO(zlib.decompress(base64.b64decode(str(value).encode())))).load()
            except Exception as e:  # noqa: BLE001 - any corruption is this row's error
                raise ValueError(f"{column}: neither JSON nor LiveCodeBench's encoding ({type(e).__name__})") from None
            cases = json.loads(text)
    if not isinstance(cases, list) or not all(isinstance(c, dict) and {"input", "output"} <= set(c) for c in cases):
        raise ValueError(f"{column}: expected a list of {{input, output, testtype}}")
    return [{"input": str(c["input"]), "output": str(c["output"])} for c in cases]


class _StringsOnly(pickle.Unpickler):
    """An unpickler that refuses every global: a pickled string loads, nothing else does."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing {module}.{name}")


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "LiveCodeBench code generation (release_v6): contest problems "
                      "executed against their tests in the sandbox, graded as lcb_runner grades; --after DATE",
                      max_tokens=4096, answer_rules={GENERIC: None}),)
