"""Parallel executions: a crash of one is that sample's error record, never the batch's end; --unsafe-exec is
recorded but outside the run id."""

from __future__ import annotations

from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.core.spec import DatasetRef, ModelSpec, RunSpec
from proctor.data.records import Item
from proctor.log.runlog import Outcome
from proctor.scoring.execute.extract import Code
from proctor.scoring.execute.pool import run_all
from proctor.scoring.execute.sandbox import Execution, Limits, Program
from proctor.scoring.execute.scorer import execute

ITEM = Item(identifier="s.0", modality="single-value", prompt="def f():\n", response="x",
            metadata={"entry_point": "f", "test": "def check(c):\n    assert c() == 1\n"})


class Flaky:
    """A runner whose first execution crashes (the sandbox itself failing); the others run as unsafe would."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    def run(self, program: Program, limits: Limits) -> Execution:
        self.calls += 1
        if "crash" in program.files["spec.json"]:
            raise OSError("bwrap: cannot create namespace")
        return Execution(exit_code=0, stdout=program.stdin.strip() + '[["check", true, null]]\n', sandbox=self.name)


def test_a_crashing_execution_is_its_samples_error_only() -> None:
    runner = Flaky()
    items = [(ITEM, Code("def f():\n    return 1  # crash\n", "completion")),
             (ITEM, Code("def f():\n    return 1\n", "completion")), (ITEM, Code("", "none"))]
    crashed, fine, empty = execute(runner, HumanEvalTests(), items)
    assert crashed.outcome is Outcome.ERROR and "cannot create namespace" in (crashed.error or "")
    assert fine.outcome is Outcome.CORRECT and empty.outcome is Outcome.NO_ANSWER
    assert runner.calls == 2  # no code: nothing run


class Echo:
    name = "echo"

    def run(self, program: Program, limits: Limits) -> Execution:
        return Execution(exit_code=0, stdout=program.stdin)


def test_run_all_keeps_the_order_and_counts_progress() -> None:
    seen: list[int] = []
    jobs = [(Program({"a.py": str(i)}, stdin=f"@{i}@"), Limits()) for i in range(5)]
    out = run_all(Echo(), jobs, on_done=seen.append)
    assert [e.stdout for e in out] == [f"@{i}@" for i in range(5)] and sorted(seen) == [1, 2, 3, 4, 5]


def test_unsafe_exec_is_recorded_but_not_in_the_run_id() -> None:
    spec = RunSpec(dataset=DatasetRef(name="humaneval"), model=ModelSpec(spec="scripted:first"))
    unsafe = spec.model_copy(update={"unsafe_exec": True})
    assert unsafe.run_id() == spec.run_id() and unsafe.model_dump()["unsafe_exec"] is True
