"""The engine's guard: `python _engine_guard.py GRACE_S PARENT_PID -- ENGINE ARGV…` (run by vllm_engine, stdlib only).

It starts the engine as its child and stays between proctor and the engine, so that nothing the engine starts
outlives it: as a child subreaper (PR_SET_CHILD_SUBREAPER) every orphaned descendant is re-parented to it,
even one that left the process group with `setsid`, so the descendants are always the tree under it. It stops
them all — SIGTERM, then SIGKILL after GRACE_S, one deadline — when it gets SIGTERM (proctor's `stop`), when
proctor dies (PR_SET_PDEATHSIG, kill -9 included: a pipe of nothing but the kernel), or when the engine exits;
then it exits with the engine's status (128 + N for a signal N).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_stop = False


def _on_term(signum: int, frame: object) -> None:
    global _stop
    _stop = True


def descendants(root: int) -> list[int]:
    """Live processes under `root` (a /proc scan of parent pids; zombies excluded)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()  # state ppid …
        except OSError:
            continue
        if fields and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


_exited: dict[int, int] = {}  # pid -> exit status, of the children reaped


def _reap() -> None:
    """Collect every exited child (re-parented orphans included), so none lingers as a zombie."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _exited[pid] = os.waitstatus_to_exitcode(status)


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_tree(grace_s: float) -> None:
    """SIGTERM every descendant, SIGKILL whatever is left (late-born ones too) when `grace_s` is up."""
    deadline = time.monotonic() + grace_s
    _signal_all(descendants(os.getpid()), signal.SIGTERM)
    while time.monotonic() < deadline:
        _reap()
        if not descendants(os.getpid()):
            return
        time.sleep(0.05)
    while left := descendants(os.getpid()):
        _signal_all(left, signal.SIGKILL)
        time.sleep(0.02)
        _reap()


def main(argv: list[str]) -> int:
    grace_s, parent, engine = float(argv[0]), int(argv[1]), argv[3:]
    signal.signal(signal.SIGTERM, _on_term)  # (ctrl-C never reaches us: we run in a session of our own)
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(_PR_SET_CHILD_SUBREAPER, 1)
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # proctor died before the death signal was armed
        return 143
    child = subprocess.Popen(engine).pid  # waited for by `_reap`, with the orphans
    while not _stop and child not in _exited and os.getppid() == parent:
        time.sleep(0.05)
        _reap()
    stop_tree(grace_s)
    while child not in _exited:
        _reap()
        time.sleep(0.02)
    status = _exited[child]
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
