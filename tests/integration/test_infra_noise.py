"""#50 item 4: infrastructure failures injected into a real run are classified 100% correctly — HTTP 500, 429 and a
garbled body (server), a hung request (timeout), an execution whose sandbox fails (sandbox) — beside the model's
own right and wrong answers; results.json counts each class, widens the interval over them and the summary warns;
`agree` with a clean rerun of the same spec names exactly the samples the infrastructure explains."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from proctor.analysis.agree import agreement
from proctor.benchmarks import humaneval
from proctor.benchmarks.code_prompts import CodePrompts
from proctor.benchmarks.hub import Rows
from proctor.data.formats.convert import question_to_item
from proctor.log.failure import Failure
from proctor.metrics.results import read_run
from proctor.run import runner
from proctor.scoring.execute.sandbox import Execution, Limits, Program, Runner
from proctor.testing import LocalServer, serve

N = 12
RIGHT = "```python\ndef add_{i}(x):\n    return x + {i}\n```"
WRONG = "```python\ndef add_{i}(x):\n    return 0\n```"
# what each item meets: its reply is right or wrong, or the infrastructure fails it
EXPECTED: dict[int, Failure | None] = {0: None, 1: None, 2: Failure.WRONG, 3: Failure.WRONG, 4: Failure.SANDBOX,
                                       5: Failure.SERVER, 6: Failure.SERVER, 7: Failure.SERVER, 8: Failure.TIMEOUT,
                                       9: None, 10: Failure.SANDBOX, 11: Failure.WRONG}
POISONS = [["add_5(", "500"], ["add_6(", "429"], ["add_7(", "garbage"], ["add_8(", "hang"]]
SANDBOX_FAILS = ("add_4(", "add_10(")


def _rows() -> list[dict[str, str]]:
    return [{"task_id": f"Synthetic/{i}", "prompt": f"def add_{i}(x):\n    \"\"\"x plus {i}.\"\"\"\n",
             "canonical_solution": f"    return x + {i}\n", "entry_point": f"add_{i}",
             "test": f"def check(candidate):\n    assert candidate(1) == {1 + i}\n"} for i in range(N)]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    rows = _rows()
    data = tmp_path / "humaneval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts = CodePrompts(humaneval.NAME, humaneval.STOPS)
    items = [question_to_item(q, humaneval.NAME) for q in humaneval.to_questions(Rows(rows))]
    wrong = {i for i, f in EXPECTED.items() if f is Failure.WRONG}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"prompt": prompts.messages(item, "chat")[0].content,
                                           "answer": (WRONG if i in wrong else RIGHT).format(i=i)}) + "\n"
                               for i, item in enumerate(items)))
    return data, answers


@dataclass(frozen=True)
class FlakySandbox:
    """The run's own sandbox, failing to start the programs of the chosen items (a sandbox failure)."""

    inner: Runner

    @property
    def name(self) -> str:
        return self.inner.name

    def run(self, program: Program, limits: Limits) -> Execution:
        if any(marker in text for marker in SANDBOX_FAILS for text in program.files.values()):
            return Execution(exit_code=None, error=f"could not start {self.name}: injected failure", sandbox=self.name)
        return self.inner.run(program, limits)


@pytest.fixture
def srv(tmp_path: Path) -> Iterator[LocalServer]:
    _, answers = _files(tmp_path)
    with serve(responder=f"file={answers}", hang_s=30.0) as server:
        yield server


def _run(cli: Any, srv: LocalServer, data: Path, out: Path) -> Any:
    return cli("run", "humaneval", "--data-file", data, "--model", "openai:m", "--base-url", srv.base_url,
               "--prompt", "chat", "--unsafe-exec", "--max-retries", "0", "--timeout", "2", "--max-error-rate", "1",
               "--no-cache", "--no-history", "--no-progress", "-o", out)


def test_injected_infrastructure_failures_are_classified_exactly(
        cli: Any, srv: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, _ = _files(tmp_path)
    srv.configure(poisons=POISONS)
    with monkeypatch.context() as m:
        real = runner.code_runner
        m.setattr(runner, "code_runner", lambda spec: FlakySandbox(real(spec)))
        r = _run(cli, srv, data, tmp_path / "noisy")
    assert r.code == 0, r.err
    samples = {s.item_id: s for s in read_run(tmp_path / "noisy").samples}
    got = {int(k.rsplit(".", 1)[1]): s.failure for k, s in samples.items()}
    assert got == EXPECTED  # 100%: every sample in its class
    f = read_run(tmp_path / "noisy").results.failures  # type: ignore[union-attr]
    assert f is not None and (f.n, f.model, f.infrastructure) == (N, 3, 6)
    assert f.by_class == {"wrong": 3, "sandbox": 2, "server": 3, "timeout": 1}
    assert f.low == pytest.approx(3 / 12) and f.high == pytest.approx(9 / 12)  # 3 right, 3 wrong, 6 unknown
    assert f.ci_low is not None and f.ci_high is not None and f.ci_low <= f.low <= f.high <= f.ci_high
    assert "failed by the infrastructure" in r.err and "above 2%" in r.err  # the warning
    assert "failures: 6 of 12 (50.0%) by the infrastructure (sandbox 2, server 3, timeout 1)" in r.out

    srv.configure(poisons=[])  # the same spec again, the infrastructure healthy
    assert _run(cli, srv, data, tmp_path / "clean").code == 0
    clean = read_run(tmp_path / "clean")
    assert clean.results is not None and clean.results.failures is not None
    assert clean.results.failures.infrastructure == 0
    record = agreement(read_run(tmp_path / "noisy"), clean)
    infra_items = sorted(f"humaneval.{i}" for i, c in EXPECTED.items() if c in (Failure.SANDBOX, Failure.SERVER,
                                                                                Failure.TIMEOUT))
    assert sorted(x.item_id for x in record.infra_flips) == infra_items
    assert all(x.failure_b is None for x in record.infra_flips)
    assert any(line.startswith("infrastructure explains 6 differences") for line in record.lines())
    shown = cli("agree", tmp_path / "noisy", tmp_path / "clean")
    assert shown.code == 0 and "infrastructure explains 6 differences: samples it failed in one run only (run 1 6, " \
        "run 2 0)" in shown.out
    report = tmp_path / "report.md"
    assert cli("report", tmp_path / "noisy", "-o", report).code == 0
    text = report.read_text()
    assert "6 of 12 samples (50.0%) failed by the infrastructure" in text  # the warning
    assert "by the infrastructure (sandbox 2, server 3, timeout 1)" in text  # the classes, with the interval
