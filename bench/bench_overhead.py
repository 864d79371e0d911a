"""Harness overhead: 12,032 MMLU-Pro-shaped questions through the whole runner with an instant model,
then the same run again into a new run directory, answered from the cache (goal: 0 model calls, ≤ 3 s).
Each run is a fresh process (wall includes loading the dataset, excludes interpreter start-up);
reported: wall seconds, peak RSS, model calls.

    .venv/bin/python bench/bench_overhead.py [--n 12032]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import WORDS

CATEGORIES = ["math", "physics", "law", "history", "biology", "economics", "other", "business",
              "chemistry", "computer science", "engineering", "health", "philosophy", "psychology"]


def write_mmlu_pro_shaped(path: Path, n: int, seed: int = 0) -> None:
    """Synthetic rows in the upstream MMLU-Pro schema (no benchmark content)."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            k = rng.choice([4, 10, 10, 10])
            options = [" ".join(rng.choice(WORDS) for _ in range(4)) + f" {i}.{j}" for j in range(k)]
            idx = rng.randrange(k)
            row = {
                "question_id": i, "question": " ".join(rng.choice(WORDS) for _ in range(30)) + "?",
                "options": options, "answer": "ABCDEFGHIJ"[idx], "answer_index": idx, "cot_content": "",
                "category": CATEGORIES[i % len(CATEGORIES)], "src": f"synthetic-{i % 7}",
            }
            f.write(json.dumps(row) + "\n")


def _timed(module: Any, name: str, acc: dict[str, float], key: str) -> None:
    """Wrap module.name so its total time is added to acc[key] (observation only; behaviour unchanged)."""
    fn = getattr(module, name)

    def wrapper(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            acc[key] += time.perf_counter() - t

    setattr(module, name, wrapper)


def child(data: Path, out: Path, store: Path) -> None:
    import os
    import resource
    from collections.abc import Sequence
    from types import SimpleNamespace

    import proctor.log.runlog
    import proctor.run.runner
    from proctor.benchmarks.registry import load_task
    from proctor.core.model import GenerateRequest, Generation, ModelBase
    from proctor.models import get_model
    from proctor.run.pipeline import evaluate
    from proctor.run.runner import RunOptions

    phases = {"fsync_s": 0.0, "finalize_s": 0.0, "append_samples_s": 0.0}
    proctor.log.runlog.os = SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    _timed(proctor.log.runlog.os, "fsync", phases, "fsync_s")
    _timed(proctor.run.runner, "finalize_run", phases, "finalize_s")
    _timed(proctor.run.runner, "append_samples", phases, "append_samples_s")

    inner = get_model("scripted:random")
    calls = {"requests": 0}

    class Counting(ModelBase):  # identity, probe, aclose: the Model protocol's defaults
        name = inner.name
        capabilities = inner.capabilities
        preferred_chunk_size = 1024

        async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
            calls["requests"] += len(requests)
            return await inner.generate(requests)

        async def loglikelihood(self, requests):  # type: ignore[no-untyped-def]
            return await inner.loglikelihood(requests)

        def describe(self):  # type: ignore[no-untyped-def]
            return inner.describe()

    t0 = time.perf_counter()
    task = load_task("mmlu-pro", data_file=data)
    t1 = time.perf_counter()
    log = evaluate(task, Counting(), RunOptions(out=out, store=store, progress=False, chunk_size=1024))
    t2 = time.perf_counter()
    n = len(log.samples)
    t3 = time.perf_counter()
    repr(log)  # asyncio.run (CPython 3.11) does this twice inside evaluate(): see docs/benchmarks.md
    repr_s = time.perf_counter() - t3
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall_s": t2 - t0, "load_task_s": t1 - t0, "evaluate_s": t2 - t1, **phases, "repr_runlog_s": repr_s,
                      "peak_rss_mb": rss_mb, "model_requests": calls["requests"], "samples": n}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=12032)
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args()
    if args.child:
        child(*(Path(p) for p in args.child))
        return
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        data = t / "test.jsonl"
        write_mmlu_pro_shaped(data, args.n)
        print("| run | questions | wall s | load_task s | fsync s | finalize s | one repr(RunLog) s | peak RSS MB "
              "| model requests |")
        print("|---|---|---|---|---|---|---|---|---|")
        # the re-run writes a NEW run directory (so nothing is resumed): every answer must come from the cache
        runs = [("cold (instant model)", "run1", "s.db"), ("fully cached re-run (new run dir)", "run2", "s.db"),
                ("the same command again (finished run dir)", "run1", "s.db")]
        for label, run_dir, db in runs:
            out = subprocess.run([sys.executable, __file__, "--child", str(data), str(t / run_dir), str(t / db)],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"| {label} | {r['samples']} | {r['wall_s']:.2f} | {r['load_task_s']:.2f} | {r['fsync_s']:.2f} "
                  f"| {r['finalize_s']:.2f} | {r['repr_runlog_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['model_requests']} |")


if __name__ == "__main__":
    main()
