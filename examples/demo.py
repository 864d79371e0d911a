"""The demo behind `make demo`: every format, every kind of scoring, a report — offline, in about a minute.

1. validate, summarise and convert the bundled example data (all three formats);
2. build a tiny random-weight model on the spot (no download) and score the seed's probability suites;
3. run the bundled CommonEval items by generation (scripted model + scripted judge for the prose, instant);
4. run the closed-set example (examples/items/multiple-choice.jsonl) both ways: by generation, and by
   log-likelihood on the tiny model — the data that suits each scoring;
5. run an MMLU-Pro-shaped file (synthetic, upstream schema) by log-likelihood on the tiny model;
6. write one HTML report of every run and print its path.

Outputs go to `out/demo/` (ignored by git). Exits non-zero if any step fails. The accuracies are
chance-level by design: the point is the machinery, which is exactly what runs on a real model.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from proctor.cli import main

ROOT = Path(__file__).resolve().parent.parent
HERE = Path("examples")  # paths relative to the repository root keep the output readable
OUT = Path("out") / "demo"
STORE = OUT / "store.sqlite"
JUDGE = "scripted:fixed=The answer matches the reference in substance.\nGRADE: CORRECT"


def step(title: str, *argv: str | Path) -> None:
    shown = " ".join(f'"{a}"' if (" " in str(a) or "\n" in str(a)) else str(a) for a in argv).replace("\n", "\\n")
    print(f"\n$ proctor {shown}    # {title}", flush=True)
    code = main([str(a) for a in argv])
    if code != 0:
        sys.exit(code)


def run() -> None:
    os.chdir(ROOT)
    shutil.rmtree(OUT, ignore_errors=True)  # scratch output: a demo re-run (or one after an upgrade) starts clean
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # tiny model: one thread is fastest on small machines
    suites = HERE / "suites"
    inputs = [HERE / "items" / "demo.jsonl", HERE / "commoneval", HERE / "questions" / "demo.json", suites]
    step("check every bundled format", "validate", *inputs)
    step("coverage of the demo items", "stats", HERE / "items" / "demo.jsonl")
    step("Question dataset → CommonEval directory (sharded)", "convert", HERE / "questions" / "demo.json",
         "--to", "commoneval", "-o", OUT / "questions-commoneval", "--shard-size", "4")
    step("items → Question dataset", "convert", HERE / "items" / "demo.jsonl", "--to", "questions",
         "-o", OUT / "items-as-questions.json")
    step("suites → items (one choice item per context)", "convert", suites, "--to", "items",
         "-o", OUT / "suites-as-items.jsonl")
    step("the converted outputs are valid too", "validate", OUT / "questions-commoneval",
         OUT / "items-as-questions.json")

    tiny = OUT / "tiny-model"
    step("a tiny random-weight model, built here (no download)", "tiny-model", tiny)
    step("the seed's reading-comprehension suites, scored by log-probability", "score", suites,
         "--model", f"hf:{tiny}", "-o", OUT / "suites-scored", "--store", STORE)
    step("CommonEval items by generation: answers extracted, prose graded by a judge", "run",
         HERE / "items" / "demo.jsonl", "--model", "scripted:random", "--judge", JUDGE,
         "-o", OUT / "run-items", "--store", STORE, "--no-progress")
    mc = HERE / "items" / "multiple-choice.jsonl"
    step("closed-set items (choices, True/False) by generation: the letter or word is extracted", "run", mc,
         "--model", "scripted:random", "-o", OUT / "run-mc-generate", "--store", STORE, "--no-progress")
    step("the same items by log-likelihood on the tiny model: each option scored, no text generated", "run", mc,
         "--model", f"hf:{tiny}", "--mode", "logprob", "-o", OUT / "run-mc-logprob", "--store", STORE, "--no-progress")
    step("MMLU-Pro (synthetic rows, upstream schema) by log-likelihood: acc and acc_norm", "run", "mmlu-pro",
         "--data-file", HERE / "upstream" / "mmlu_pro", "--model", f"hf:{tiny}", "--mode", "logprob",
         "-o", OUT / "run-mmlu-pro", "--store", STORE, "--no-progress")
    step("the run history", "runs", "--store", STORE)
    step("one self-contained HTML report of every run", "report", OUT / "run-mc-generate", OUT / "run-mc-logprob",
         OUT / "run-items", OUT / "run-mmlu-pro", OUT / "suites-scored", "-o", OUT / "report.html", "--store", STORE)
    print(f"\nDemo done. Open the report: {(ROOT / OUT / 'report.html').resolve()}")


if __name__ == "__main__":
    run()
