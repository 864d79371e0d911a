"""Log-likelihood parity and speed: proctor's HF backend vs lm-evaluation-harness's HFLM.

Same tiny local model, same (context, continuation) requests, same batch size, CPU, one process,
alternating repetitions. Prints max |Δ logprob| and the time ratio proctor / lm-eval (median, spread).

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv-bench/bin/python bench/bench_lmeval.py [--reps 3] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import cross_product, single_token


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--contexts", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads, the same for both sides")
    args = ap.parse_args()

    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from proctor.core.model import LoglikelihoodRequest
    from proctor.models.hf import HFModel
    from proctor.models.tiny import TinyShape, build_tiny_model

    torch.set_num_threads(args.threads)
    model_dir = build_tiny_model(Path(tempfile.gettempdir()) / "proctor-bench-tiny",
                                 shape=TinyShape(hidden_size=128, num_layers=4))
    ours = HFModel(str(model_dir), batch_size=args.batch_size, dtype="float32", device="cpu")
    theirs = HFLM(pretrained=str(model_dir), batch_size=args.batch_size, device="cpu", dtype="float32", add_bos_token=True)

    workloads = {
        "cross-product, 3-word queries": cross_product(n_contexts=args.contexts)[0],
        "single-token letters": single_token(n_contexts=args.contexts),
    }
    n_prompt = len(ours.prepare_all([LoglikelihoodRequest(*workloads["single-token letters"][0])])[0].seq)
    print(f"tiny llama (hidden 128, 4 layers, random weights), float32, CPU, batch size {args.batch_size} both sides, "
          f"{args.threads} torch thread(s) both sides, ~{n_prompt}-token contexts; lm-eval HFLM add_bos_token=True; "
          f"median of {args.reps} alternating reps (after one warm-up each)")
    print("| workload | requests | max abs diff | proctor s (median) | lm-eval s (median) | ratio proctor/lm-eval (min–max) |")
    print("|---|---|---|---|---|---|")
    for name, pairs in workloads.items():
        reqs = [LoglikelihoodRequest(c, q) for c, q in pairs]
        insts = [Instance("loglikelihood", {}, (c, q), i) for i, (c, q) in enumerate(pairs)]
        t_ours, t_theirs, ratios = [], [], []
        a = asyncio.run(ours.loglikelihood(reqs[:8]))  # warm-up, both sides
        b = theirs.loglikelihood(insts[:8], disable_tqdm=True)
        for rep in range(args.reps):  # alternate who goes first, so drifting load hits both sides alike
            for side in ((0, 1) if rep % 2 == 0 else (1, 0)):
                t0 = time.perf_counter()
                if side == 0:
                    a = asyncio.run(ours.loglikelihood(reqs))
                    t_ours.append(time.perf_counter() - t0)
                else:
                    b = theirs.loglikelihood(insts, disable_tqdm=True)
                    t_theirs.append(time.perf_counter() - t0)
            ratios.append(t_ours[-1] / t_theirs[-1])
        diff = max(abs(x.logprob - y[0]) for x, y in zip(a, b, strict=True))
        greedy_agree = sum(x.is_greedy == y[1] for x, y in zip(a, b, strict=True)) / len(a)
        print(
            f"| {name} | {len(pairs)} | {diff:.2e} (greedy agree {greedy_agree:.0%}) | {statistics.median(t_ours):.2f} "
            f"| {statistics.median(t_theirs):.2f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |"
        )


if __name__ == "__main__":
    main()
