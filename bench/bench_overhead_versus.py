"""Harness overhead of this tree against another version's, side by side: the CPU seconds (user + sys) and
wall of `bench_overhead.py`'s child run (12,032 MMLU-Pro-shaped rows, instant model), interleaved, each tree
`--repeat` times. CPU time is what a loaded machine distorts least.

    git archive 6639c56 src bench | tar -x -C /tmp/base
    PYTHONPATH=src .venv/bin/python bench/bench_overhead_versus.py --other /tmp/base [--n 12032] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_overhead import write_mmlu_pro_shaped


def child_run(tree: Path, data: Path, out: Path, store: Path) -> tuple[float, float]:
    """(CPU s, wall s) of one child run of `tree`'s bench_overhead.py with `tree`'s src."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "OMP_NUM_THREADS": "1"}
    text = subprocess.run([sys.executable, str(tree / "bench" / "bench_overhead.py"), "--child", str(data), str(out),
                           str(store)], env=env, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(text.strip().splitlines()[-1])["wall_s"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--other", type=Path, required=True, help="a tree with src/ and bench/ of another version")
    ap.add_argument("--n", type=int, default=12032)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    trees = {"other": args.other.resolve(), "this": HERE.parent}
    print("| tree | run | CPU s | wall s |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "test.jsonl"
        write_mmlu_pro_shaped(data, args.n)
        for i in range(args.repeat):
            for name, tree in trees.items():
                out, store = Path(tmp) / f"{name}{i}", Path(tmp) / f"{name}{i}.db"
                for label in ("cold", "finished run again"):
                    cpu, wall = child_run(tree, data, out, store)
                    print(f"| {name} | {label} | {cpu:.2f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()
