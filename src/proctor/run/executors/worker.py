"""One shard, on whichever machine the engine picked: `python -m proctor.run.executors.worker OUT.shards K ATTEMPT`.

It runs shard K of the plan's spec through the one pipeline into `OUT.shards/shard-K-of-N/` (resuming what an
earlier attempt finished; SIGTERM stops it at once, whatever the engine's own handlers), with the user's store for the request cache but no history (the merged run is the one
recorded), appends what it prints to the shard's log, and writes its status file when it starts and ends.
"""

from __future__ import annotations

import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from ...util.errors import ProctorError
from ..interruptible import terminate_as_interrupt
from ..pipeline import Events, RunOptions, run
from .plan import read_plan, write_status


def run_shard(plan_dir: str, index: int, attempt: int) -> int:
    """Run shard `index` (attempt `attempt`) of the plan in `plan_dir`; its exit status (0: done)."""
    plan = read_plan(Path(plan_dir))
    write_status(plan, index, attempt, None)
    plan.log_path(index).parent.mkdir(parents=True, exist_ok=True)
    rc = 1
    with open(plan.log_path(index), "a", encoding="utf-8") as log, redirect_stdout(log), redirect_stderr(log):
        print(f"== shard {index}/{plan.count}, attempt {attempt}, pid {os.getpid()}", flush=True)
        try:
            if Path(plan.cwd).is_dir():
                os.chdir(plan.cwd)  # the spec's relative data paths are the submitter's
            options = RunOptions(out=plan.shard_dir(index), store=Path(plan.store) if plan.store else None,
                                 use_cache=plan.use_cache, record_history=False, progress=False, command=plan.command)
            with terminate_as_interrupt():  # a scheduler's stop (scancel, a pod deleted) ends the shard now
                run([plan.shard_spec(index)], options, Events(resuming=lambda line: print(line, flush=True)))
            rc = 0
        except KeyboardInterrupt:
            print("stopped (SIGTERM or ctrl-C): what was answered is kept for the next attempt", flush=True)
            rc = 130
        except ProctorError as e:
            print(f"shard stopped: {e}", flush=True)  # the shard's log; the engine reports the shard failed
            rc = 2
        except Exception as e:  # noqa: BLE001 - a shard's crash is its status and its log, never the engine's
            import traceback

            traceback.print_exc()
            print(f"shard crashed: {type(e).__name__}: {e}", flush=True)
        finally:
            print(f"== shard {index}/{plan.count}, attempt {attempt}: exit {rc}", flush=True)
    write_status(plan, index, attempt, rc)
    return rc


def main(argv: list[str]) -> int:
    plan_dir, index, attempt = argv
    return run_shard(plan_dir, int(index), int(attempt))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
