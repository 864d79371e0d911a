"""MBPP's verdicts against bigcode-evaluation-harness's own execution (`custom_metrics/execute.py`
`check_correctness`, run on the candidate and its asserts joined, as its `compute_code_eval` runs them): its
`test_imports` are never run unless `test_imports=True`; slow, memory-hungry and big-output solutions get its
verdict under the authors' limits (#49 item 1)."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from proctor.benchmarks import mbpp
from proctor.benchmarks.hub import Rows
from proctor.data.formats.convert import question_to_item
from proctor.log.runlog import Outcome
from proctor.scoring.execute.extract import from_completion
from proctor.scoring.execute.sandbox import Bubblewrap
from proctor.scoring.execute.scorer import execute

# ../shared/upstream beside the checkout (a worktree under wt/ has it one level further up)
UPSTREAM = next((p for p in (Path(__file__).resolve().parents[i] / "shared" / "upstream" for i in (3, 4)) if p.is_dir()),
                Path(__file__).resolve().parents[3] / "shared" / "upstream")
EXECUTE = UPSTREAM / "bigcode-evaluation-harness" / "bigcode_eval" / "tasks" / "custom_metrics" / "execute.py"
ROW = {"source_file": "x", "task_id": 9, "prompt": "Write a function that returns the square root of x (synthetic).",
       "code": "import math\ndef root(x):\n    return math.sqrt(x)", "test_imports": ["import math"],
       "test_list": ["assert math.isclose(root(4), 2.0)", "assert math.isclose(root(9), 3.0)"]}
CASES = {
    "imports math": "import math\ndef root(x):\n    return math.sqrt(x)\n",
    "relies on test_imports": "def root(x):\n    return x ** 0.5\n",  # `math` only from the split's imports
    "slow, 2 s an assert": "import math, time\ndef root(x):\n    time.sleep(2)\n    return math.sqrt(x)\n",
    "maps 1.5 GB": "import math, mmap\nm = mmap.mmap(-1, 1500 << 20)\ndef root(x):\n    return math.sqrt(x)\n",
    "prints 20 MB": "import math\nprint('x' * (20 << 20))\ndef root(x):\n    return math.sqrt(x)\n",
    "wrong": "import math\ndef root(x):\n    return x\n",
}


def _bigcode() -> ModuleType:
    if not EXECUTE.is_file():
        pytest.skip(f"needs {EXECUTE} (../shared/upstream: bigcode-evaluation-harness)")
    spec = importlib.util.spec_from_file_location("bigcode_execute", EXECUTE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _theirs(module: Any, code: str, imports: bool) -> bool:
    tests = ([*ROW["test_imports"]] if imports else []) + ROW["test_list"]
    return bool(module.check_correctness(code + "\n" + "\n".join(tests), 3.0, 0, 0)["passed"])


def _ours(bwrap: Bubblewrap, **settings: Any) -> dict[str, bool]:
    item = question_to_item(mbpp.to_questions(Rows([dict(ROW)]))[0], mbpp.NAME)
    scored = execute(bwrap, mbpp.MbppTests(**settings), [(item, from_completion("", c)) for c in CASES.values()])
    return {name: s.outcome is Outcome.CORRECT for name, s in zip(CASES, scored)}


@pytest.mark.needs("bubblewrap")
def test_verdicts_equal_bigcodes_and_test_imports_is_an_option(bwrap: Bubblewrap) -> None:
    module = _bigcode()
    with ThreadPoolExecutor(2 * len(CASES) + 3) as pool:
        plain = pool.map(lambda c: _theirs(module, c, False), CASES.values())
        imported = pool.map(lambda c: _theirs(module, c, True), CASES.values())
        ours = pool.submit(_ours, bwrap)
        with_imports = pool.submit(_ours, bwrap, test_imports=True)
        strict = pool.submit(_ours, bwrap, exec_limits="proctor")
        bigcode, bigcode_imports = dict(zip(CASES, plain)), dict(zip(CASES, imported))
    assert bigcode == {"imports math": True, "relies on test_imports": False, "slow, 2 s an assert": False,
                       "maps 1.5 GB": True, "prints 20 MB": True, "wrong": False}
    assert ours.result() == bigcode
    assert with_imports.result() == bigcode_imports and bigcode_imports["relies on test_imports"]
    assert strict.result() == {**bigcode, "slow, 2 s an assert": True, "maps 1.5 GB": False, "prints 20 MB": False}
