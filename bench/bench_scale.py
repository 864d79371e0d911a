"""Scale: a run of N samples (synthetic MMLU-Pro rows in the upstream schema × epochs, `scripted:random`),
its report and its three exports (inspect, eee, llmwc) — wall time and peak RSS of each, every step a fresh
`proctor` process (peak RSS from `os.wait4`'s rusage of that process alone).

    PYTHONPATH=src .venv/bin/python bench/bench_scale.py [--samples 100000] [--epochs 8] [--steps run,report,...]
        [--work DIR] [--src OLD_CHECKOUT/src]   # --src: the same steps on another tree (before/after)

The goal (issue 32, #19/#20): each step of a 100k-sample run finishes in seconds to a minute and stays
under 1 GB peak RSS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CATEGORIES = ["math", "physics", "law", "history", "biology", "economics", "chemistry", "psychology"]
STEPS = ("run", "report", "inspect", "eee", "llmwc")  # also: sharded (run --shards 4 --executor local, then merge),
# merge (the sharded run's four shard directories merged again, in a process of its own)


def write_mmlu_pro(folder: Path, n_items: int) -> None:
    """`n_items` synthetic rows in TIGER-Lab/MMLU-Pro's parquet schema (test split) and a small validation split."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)

    def rows(n: int, start: int, split: str) -> pa.Table:
        ids = list(range(start, start + n))
        return pa.table({
            "question_id": pa.array(ids, pa.int64()),
            "question": [f"[synthetic {split} {i}] Which option is number {i % 10}?" for i in ids],
            "options": [[f"option {j} of {i}" for j in range(10)] for i in ids],
            "answer": ["ABCDEFGHIJ"[i % 10] for i in ids],
            "answer_index": pa.array([i % 10 for i in ids], pa.int64()),
            "cot_content": ["" for _ in ids],
            "category": [CATEGORIES[i % len(CATEGORIES)] for i in ids],
            "src": [f"synthetic-{CATEGORIES[i % len(CATEGORIES)]}" for i in ids],
        })

    pq.write_table(rows(n_items, 100, "test"), folder / "test-00000-of-00001.parquet")
    pq.write_table(rows(5 * len(CATEGORIES), 10, "val").replace_schema_metadata(None),
                   folder / "validation-00000-of-00001.parquet")


def command(step: str, work: Path, epochs: int) -> list[str]:
    proctor = [sys.executable, "-m", "proctor"]
    run = work / "run"
    if step == "run":
        return [*proctor, "run", "mmlu-pro", "--data-file", str(work / "data"), "--model", "scripted:random",
                "--epochs", str(epochs), "-o", str(run), "--store", str(work / "store.sqlite"), "--no-progress",
                "--no-cache"]
    if step == "sharded":  # the same run as 4 local shards merged (peak RSS: the largest of the processes)
        shutil.rmtree(work / "sharded", ignore_errors=True)
        shutil.rmtree(work / "sharded.shards", ignore_errors=True)
        return [*proctor, "run", "mmlu-pro", "--data-file", str(work / "data"), "--model", "scripted:random",
                "--epochs", str(epochs), "-o", str(work / "sharded"), "--store", str(work / "store.sqlite"),
                "--no-cache", "--shards", "4", "--executor", "local"]
    if step == "merge":  # the shards `sharded` left, merged again alone (its peak RSS: the merge's own)
        shutil.rmtree(work / "merged", ignore_errors=True)
        shards = sorted(str(p) for p in (work / "sharded.shards").glob("shard-*-of-*") if p.is_dir())
        return [*proctor, "merge", *shards, "-o", str(work / "merged"), "--store", str(work / "store.sqlite")]
    if step == "report":
        return [*proctor, "report", str(run), "-o", str(work / "report.html"), "--store", str(work / "store.sqlite")]
    return [*proctor, "export", str(run), "--to", step, "-o", str(work / f"export-{step}")]


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MB and exit status of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"  {argv[3]} exited {proc.returncode}: {err.decode(errors='replace')[-500:]}", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def run_dir_size(run: Path) -> str:
    """The run directory's bytes a sample, and beyond the model's own output (each sample's `raw_output` as JSON)."""
    import json

    total = sum(p.stat().st_size for p in run.iterdir() if p.is_file())
    n = output = 0
    with open(run / "samples.jsonl", "rb") as f:
        for line in f:
            n += 1
            output += len(json.dumps(json.loads(line).get("raw_output")).encode())
    return f"{total / 1e6:,.1f} MB, {total / n:,.0f} B a sample, {(total - output) / n:,.0f} B beyond the model's output"


def main() -> None:
    if sys.argv[1:2] == ["--write-data"]:
        write_mmlu_pro(Path(sys.argv[2]), int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("--work", type=Path, help="keep the files here (default: a temporary folder, removed)")
    ap.add_argument("--src", help="run this source tree's proctor (PYTHONPATH), e.g. an older checkout's src/")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="proctor-scale-"))
    steps = args.steps.split(",")
    n_items = args.samples // args.epochs
    if "run" in steps:
        for p in (work / "run", work / "store.sqlite", work / "data"):
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        # in a process of its own: pyarrow and the tables would stay in this one, and a child's peak RSS counts
        # the parent's at the fork (Linux carries `maxrss` across exec): every step read ≥ 136 MB at 24k before
        subprocess.run([sys.executable, __file__, "--write-data", str(work / "data"), str(n_items)], check=True)
    for step in steps:
        shutil.rmtree(work / f"export-{step}", ignore_errors=True)
    print(f"{n_items} synthetic MMLU-Pro items × {args.epochs} epochs = {n_items * args.epochs} samples, "
          "scripted:random, each step a fresh process")
    import resource

    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB peak RSS, the floor "
          "of each step's figure: a child's peak counts its parent's at the fork)")
    print("| step | wall s | CPU s | peak RSS MB | exit |")
    print("|---|---:|---:|---:|---:|")
    env = {**os.environ, "OMP_NUM_THREADS": "1", **({"PYTHONPATH": args.src} if args.src else {})}
    for step in steps:
        wall, cpu, rss, code = measure(command(step, work, args.epochs), env)
        name = step if step in ("run", "report", "sharded", "merge") else f"export --to {step}"
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {code} |", flush=True)
    if "run" in steps and (work / "run" / "samples.jsonl").exists():
        print(f"run directory: {run_dir_size(work / 'run')}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
