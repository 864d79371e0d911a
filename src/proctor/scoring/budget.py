"""Graders under a time and a size budget: a reply no grader can read in time is that sample's named outcome.

Every grader call on a model's reply (MathArena's parser, math-verify, IFEval's checkers, a reference rule's
reader, a judge's verdict parser) goes through `within_budget`: a reply longer than `GRADER_MAX_CHARS` is not
handed to the grader at all, and a grader still running after `GRADER_SECONDS` is stopped. Either way, and
when the grader raises (a RecursionError on a reply nested 100,000 deep), the call raises `GaveUp`, which the
scorer turns into the sample's verdict: `no_answer`, score 0, `extraction_rule` "grader-gave-up", the reason in
`details.rejected` (`proctor.scoring.scorers.score_item`). The sample is written like any other, so a resume
never grades it again.

The time limit is one watchdog thread that raises `GraderTimeout` in the grading thread at its deadline
(`PyThreadState_SetAsyncExc`): it works in the main thread and in the runner's worker threads alike (a signal
works only in the main thread), leaves the graders' own `signal.alarm` timeouts (math-verify's) alone, and costs
a lock and a notify per call (a few microseconds). It derives from
BaseException, so a grader's `except Exception` cannot swallow it; it is raised again every half second until
the call returns. It lands between two Python bytecodes, so a grader whose arithmetic runs in C (sympy's big
integers under MathArena's parser and math-verify: `9^{9^{9}}`, `1000000!`) is run in a grader process instead
(`isolate`), killed and started afresh when it runs past its time; the process costs its start (seconds: the
graders' imports) once per run and a few milliseconds a call.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

from ..util.errors import ProctorError

T = TypeVar("T")

GRADER_SECONDS = 30.0  # wall-clock seconds one grader call may take (a normal reply takes milliseconds)
GRADER_MAX_CHARS = 1_000_000  # characters of reply a grader is given (a 250k-token reply; more is refused unread)
GAVE_UP = "grader-gave-up"  # the extraction rule of a sample whose grader gave up
_AGAIN_S = 0.5  # how often a swallowed GraderTimeout is raised again
START_SECONDS = 300.0  # how long the grader process may take to start (its imports), apart from any call's time
_GRADERS = ("proctor.scoring.scorers", "math_verify", "matharena.parser")  # what the grader process imports first


class GaveUp(Exception):
    """A grader gave up on a reply (too long, too slow, or it raised): `why` says which, in a few words."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class GraderTimeout(BaseException):
    """Raised inside a grader that ran past its time (BaseException: `except Exception` cannot keep it)."""


def within_budget(grader: str, call: Callable[..., T], *args: object, text: str,
                  seconds: float | None = None, isolate: bool = False) -> T:
    """`call(*args)` when `text` (the reply it grades) is within GRADER_MAX_CHARS and it returns within
    `seconds` (default GRADER_SECONDS); else `GaveUp`, as also when it raises anything but a ProctorError
    (a grader that is not installed, say, still stops the run in one line). `isolate`: in the grader process
    (`call` and `args` picklable), for graders whose arithmetic can run in C without returning to Python."""
    if len(text) > GRADER_MAX_CHARS:
        raise GaveUp(f"{grader}: reply of {len(text):,} characters, over the graders' {GRADER_MAX_CHARS:,}")
    limit = GRADER_SECONDS if seconds is None else seconds
    if isolate:
        return _ISOLATED.call(grader, limit, call, args)
    watch = _WATCHDOG.watch(limit)
    try:
        try:
            result = call(*args)
        finally:
            _WATCHDOG.release(watch)  # after this nothing more is raised; one raised and not yet landed is withdrawn
    except GraderTimeout:
        raise GaveUp(f"{grader}: no verdict within {limit:g} s") from None
    except (ProctorError, GaveUp):
        raise
    except Exception as e:  # noqa: BLE001 - a grader crashing on one reply (RecursionError, MemoryError, its own)
        first = str(e).splitlines()[0][:120] if str(e) else ""
        raise GaveUp(f"{grader}: raised {type(e).__name__}" + (f": {first}" if first else "")) from None
    if watch.fired:  # it swallowed every GraderTimeout and returned anyway: its verdict is not taken
        raise GaveUp(f"{grader}: no verdict within {limit:g} s")
    return result


class _Watch:
    """One grader call being timed: its thread, its deadline, whether GraderTimeout was raised in it."""

    __slots__ = ("deadline", "fired", "thread")

    def __init__(self, thread: int, deadline: float) -> None:
        self.thread, self.deadline, self.fired = thread, deadline, False


class _Watchdog:
    """One daemon thread for the process, raising GraderTimeout in each watched call's thread at its deadline
    (and every half second after, until released). Watching a call costs a lock and a notify."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watched: dict[int, _Watch] = {}
        self._thread: threading.Thread | None = None

    def watch(self, limit: float) -> _Watch:
        w = _Watch(threading.get_ident(), time.monotonic() + limit)
        with self._cond:
            self._watched[id(w)] = w
            if self._thread is None or not self._thread.is_alive():  # the first call, or a forked child
                self._thread = threading.Thread(target=self._run, name="proctor-grader-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
        return w

    def release(self, w: _Watch) -> None:
        """No GraderTimeout for `w` after this returns (one landing while it runs is caught and it runs again)."""
        while True:
            try:
                with self._cond:
                    self._watched.pop(id(w), None)
                    if w.fired:
                        _raise_in(w.thread, None)
                return
            except GraderTimeout:
                continue

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for w in self._watched.values():
                    if w.deadline <= now:
                        w.fired = True
                        _raise_in(w.thread, GraderTimeout)
                        w.deadline = now + _AGAIN_S
                soonest = min((w.deadline for w in self._watched.values()), default=None)
                self._cond.wait(None if soonest is None else max(0.0, soonest - now))


_WATCHDOG = _Watchdog()


class _Isolated:
    """One grader process (`python -c serve()`, this interpreter, this sys.path), started at its first call,
    asked one call at a time over its stdin and stdout (length-prefixed pickles), killed and started afresh when a
    call runs past its time: the computer-algebra graders' big-integer arithmetic (MathArena's parser on
    `9^{9^{9}}`, a factorial of a million) runs in C, where no exception raised in a thread lands until it ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def call(self, grader: str, limit: float, call: Callable[..., T], args: tuple[object, ...]) -> T:
        with self._lock:
            try:
                proc = self._started()
                assert proc.stdin is not None and proc.stdout is not None
                _send(proc.stdin, (call, args))
                answer = _receive(proc.stdout, time.monotonic() + limit)
            except (OSError, EOFError):
                code = self._stop()
                raise GaveUp(f"{grader}: its process ended (exit status {code})") from None
            if answer is None:
                self._stop()
                raise GaveUp(f"{grader}: no verdict within {limit:g} s")
        status, value = answer
        if status == "ok":
            result: T = value
            return result
        if status == "proctor":
            raise ProctorError(value)
        raise GaveUp(f"{grader}: raised {value}")

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # this proctor, not another
        self._proc = subprocess.Popen([sys.executable, "-c", "from proctor.scoring.budget import serve; serve()"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self._proc.stdout is not None
        if _receive(self._proc.stdout, time.monotonic() + START_SECONDS) != ("ready", None):  # its imports: not timed
            raise EOFError
        return self._proc

    def _stop(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
        return proc.returncode


def _send(pipe: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(len(data).to_bytes(8, "little") + data)
    pipe.flush()


def _receive(pipe: IO[bytes], deadline: float | None = None) -> Any:
    """The next value on `pipe`; None when nothing came before `deadline`; EOFError when the pipe closed."""
    if deadline is not None:
        ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None
    head = pipe.read(8)
    if len(head) < 8:
        raise EOFError
    data = pipe.read(int.from_bytes(head, "little"))
    return pickle.loads(data)  # from proctor's own grader process


def _die_with_parent() -> None:
    """Linux: killed when proctor ends (a killed proctor must not leave a grader computing `9^{9^{9}}` for hours)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        return


def serve() -> None:
    """The grader process: run each call it is sent; answer ("ok", result), ("proctor", message) or ("raised",
    what). What the graders print goes to stderr (stdout carries the answers)."""
    _die_with_parent()
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = os.fdopen(0, "rb")
    for module in _GRADERS:  # imported before the first call is timed
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    _send(answers, ("ready", None))
    while True:
        try:
            call, args = _receive(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", call(*args))
        except ProctorError as e:
            answer = ("proctor", str(e))
        except Exception as e:  # noqa: BLE001 - a grader crashing on one reply: the caller's GaveUp
            first = str(e).splitlines()[0][:120] if str(e) else ""
            answer = ("raised", type(e).__name__ + (f": {first}" if first else ""))
        try:
            _send(answers, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as e:  # an answer that does not pickle
            _send(answers, ("raised", f"an answer that does not pickle ({type(e).__name__})"))


_ISOLATED = _Isolated()


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise `exc` in thread `thread_id` at its next bytecode (None: withdraw one set and not yet raised)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else None)


__all__ = ["GAVE_UP", "GRADER_MAX_CHARS", "GRADER_SECONDS", "GaveUp", "GraderTimeout", "within_budget"]
