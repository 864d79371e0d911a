"""interruptible.run: worker threads are daemon threads nobody waits for, so ctrl-C and the exit are immediate."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from proctor.run.interruptible import DaemonThreadExecutor, run


def test_run_returns_the_result_and_workers_are_daemon_threads() -> None:
    async def main() -> tuple[int, bool, str]:
        def work() -> tuple[int, bool, str]:
            me = threading.current_thread()
            return 6 * 7, me.daemon, me.name

        return await asyncio.to_thread(work)

    assert run(main()) == (42, True, "proctor-worker")


def test_a_worker_exception_reaches_the_awaiting_coroutine() -> None:
    async def main() -> None:
        await asyncio.to_thread(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        run(main())


def test_shutdown_does_not_wait_for_a_busy_worker() -> None:
    release = threading.Event()
    pool = DaemonThreadExecutor()
    future = pool.submit(release.wait, 30)
    t0 = time.monotonic()
    pool.shutdown(wait=True)
    assert time.monotonic() - t0 < 1 and not future.done()
    release.set()
    assert future.result(timeout=5) is True


def test_the_process_exits_while_a_worker_still_computes() -> None:
    code = ("import asyncio, time; from proctor.run.interruptible import run\n"
            "async def main():\n"
            "    asyncio.get_running_loop().run_in_executor(None, time.sleep, 60)\n"
            "    await asyncio.sleep(0.05)\n"
            "run(main()); print('done')")
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "done" and time.monotonic() - t0 < 20
