"""Run a coroutine so that ctrl-C takes effect at once, even while a backend computes in a worker thread.

`asyncio.run` answers ctrl-C by cancelling the main task, then joins the default executor: a local model
generating a batch in `asyncio.to_thread` kept the process alive until the batch ended (20 s and more),
and the interpreter joins executor threads again at exit. Here worker threads are daemon threads that
nobody waits for once the run is over: what finished is already on disk, and an abandoned batch ends
with the process.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class DaemonThreadExecutor(ThreadPoolExecutor):
    """One daemon thread per call; `shutdown` never waits (the loop only shuts it down once the run is over)."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting coroutine, as ThreadPoolExecutor does
                future.set_exception(e)

        threading.Thread(target=work, name="proctor-worker", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with worker threads that never hold up ctrl-C or the exit. Called while an event
    loop runs in this thread (Jupyter, an async app), it runs `coro` on a loop of its own in a worker thread
    and waits for it (that loop is never blocked by this one: it is not this one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_here(coro)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="proctor-loop") as pool:
        return pool.submit(_run_here, coro).result()


def _run_here(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(DaemonThreadExecutor())
        return runner.run(coro)



@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM (a job scheduler's stop, `kill`) is ctrl-C: a KeyboardInterrupt, so what
    the block was writing is removed by the same cleanup. Only the main thread can set it; elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


__all__ = ["DaemonThreadExecutor", "run", "terminate_as_interrupt"]
