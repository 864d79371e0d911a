"""Prefix sharing in HFModel.loglikelihood vs a naive one-forward-pass-per-pair scorer.

Scorers: `packed` (prefix sharing, sibling edges packed into one row with a tree mask: the default),
`shared` (prefix sharing, one padded row per edge: `pack_siblings=False`), `naive` (one forward per pair).

Workload (probsem's cross-product): a ~300-token prompt, N contexts (default 200), each followed by
the same Q multi-token queries (default 4). Each scorer runs in its own fresh subprocess so peak memory
(max RSS above the loaded model's) is its own; wall time is the median of --reps repetitions.

    python bench/bench_prefix.py [--contexts 200] [--queries 4] [--reps 3] [--threads 1] [--methods packed,shared,naive]
    python bench/bench_prefix.py --ab [--reps 7]   # packed vs shared, alternating in one process
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Large language models are increasingly being used to generate text.",
    "Based on the above paragraph, please answer the following questions.",
    "The correct answer is: The answer is (A).",
]
QUERIES = [" True or False", " The answer is (A)", " physics chemistry biology", " 0 1 2 3 4 5"]


def workload(n_contexts: int, n_queries: int) -> list[tuple[str, str]]:
    prompt = " ".join(SENTENCES[i % len(SENTENCES)] for i in range(26))  # about 300 tokens
    pairs: list[tuple[str, str]] = []
    for i in range(n_contexts):
        ctx = f"{prompt}\nQuestion {i}: {SENTENCES[i % 4]} {i * 7 % 1000} {i % 13}\nAnswer:"
        pairs.extend((ctx, QUERIES[q % len(QUERIES)] + " " * (q // len(QUERIES))) for q in range(n_queries))
    return pairs


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def worker(method: str, model_dir: str, n_contexts: int, n_queries: int, reps: int, threads: int) -> dict[str, Any]:
    import torch

    from proctor.core.model import LoglikelihoodRequest
    from proctor.models.hf import HFModel

    torch.set_num_threads(threads)
    m = HFModel(model_dir, batch_size=32, pack_siblings=method == "packed")
    reqs = [LoglikelihoodRequest(c, q) for c, q in workload(n_contexts, n_queries)]
    prepared = m.prepare_all(reqs)
    base_rss = _rss_mb()
    times, logprobs = [], []
    for _ in range(reps):
        m.reset_stats()
        t0 = time.perf_counter()
        if method in ("packed", "shared"):
            logprobs = [r.logprob for r in m.loglikelihood_sync(reqs)]
            forwarded = m.stats["tokens_forwarded"]
        else:  # naive: one full forward pass per pair
            logprobs, forwarded = [], 0
            with torch.inference_mode():
                for p in m.prepare_all(reqs):  # the same tokenization work as the shared scorer
                    logp = torch.log_softmax(m.model(torch.tensor([p.seq[:-1]])).logits.float(), -1)[0]
                    tgt = torch.tensor(p.seq[p.cont_start :])
                    logprobs.append(float(logp[p.cont_start - 1 :].gather(-1, tgt[:, None]).sum()))
                    forwarded += len(p.seq) - 1
        times.append(time.perf_counter() - t0)
    # unique tokens: distinct prefixes among the forwarded sequences (a trie's size)
    unique = len({tuple(p.seq[: k + 1]) for p in prepared for k in range(len(p.seq) - 1)})
    return {
        "method": method, "pairs": len(reqs), "times_s": times, "median_s": statistics.median(times),
        "tokens_forwarded": forwarded, "unique_tokens": unique, "peak_rss_mb_above_model": _rss_mb() - base_rss,
        "logprobs": logprobs,
    }


def _time_forward(m: Any) -> list[float]:
    """Wrap `m._forward_level` so each outermost call (the whole trie's forward passes) adds its time."""
    spent, depth, inner = [0.0], [0], m._forward_level

    def timed(items: Any) -> None:
        depth[0] += 1
        t0 = time.perf_counter()
        try:
            inner(items)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[0] += time.perf_counter() - t0

    m._forward_level = timed
    return spent


def ab(model_dir: str, n_contexts: int, n_queries: int, reps: int, threads: int) -> None:
    """packed vs shared in one process, alternating, on the same weights: paired times are less noisy."""
    import torch

    from proctor.core.model import LoglikelihoodRequest
    from proctor.models.hf import HFModel

    torch.set_num_threads(threads)
    reqs = [LoglikelihoodRequest(c, q) for c, q in workload(n_contexts, n_queries)]
    models = {k: HFModel(model_dir, batch_size=32, pack_siblings=k == "packed") for k in ("packed", "shared")}
    spent = {k: _time_forward(m) for k, m in models.items()}
    wall: dict[str, list[float]] = {k: [] for k in models}
    fwd: dict[str, list[float]] = {k: [] for k in models}
    out: dict[str, list[float]] = {}
    for rep in range(reps + 1):  # the first round warms up
        for k, m in models.items():
            spent[k][0] = 0.0
            t0 = time.perf_counter()
            out[k] = [r.logprob for r in m.loglikelihood_sync(reqs)]
            if rep:
                wall[k].append(time.perf_counter() - t0)
                fwd[k].append(spent[k][0])
    diff = max(abs(x - y) for x, y in zip(out["packed"], out["shared"]))
    print(f"A/B in one process, {len(reqs)} pairs, {threads} thread(s), median of {reps} alternating rounds")
    print(f"{'scorer':<8} {'wall s':>8} {'forward s':>10}")
    for k in models:
        print(f"{k:<8} {statistics.median(wall[k]):>8.2f} {statistics.median(fwd[k]):>10.2f}")
    for name, t in (("wall", wall), ("forward", fwd)):
        ratios = [s / q for s, q in zip(t["shared"], t["packed"])]
        print(f"speed-up shared / packed, {name}: {statistics.median(ratios):.2f}x "
              f"(paired rounds: {min(ratios):.2f}-{max(ratios):.2f})")
    print(f"max |logprob diff| = {diff:.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", type=int, default=200)
    ap.add_argument("--queries", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads per scorer")
    ap.add_argument("--model-dir", default=None, help="a local model (default: proctor.models.tiny, built once)")
    ap.add_argument("--methods", default="packed,shared,naive", help="comma-separated scorers to run")
    ap.add_argument("--ab", action="store_true", help="packed vs shared alternating in one process")
    ap.add_argument("--worker", choices=["packed", "shared", "naive"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.model_dir, a.contexts, a.queries, a.reps, a.threads)))
        return
    from proctor.models.tiny import build_tiny_model

    model_dir = a.model_dir or str(build_tiny_model(Path(tempfile.gettempdir()) / "proctor-bench-tiny-llama"))
    if a.ab:
        ab(model_dir, a.contexts, a.queries, a.reps, a.threads)
        return
    results = {}
    for method in a.methods.split(","):
        cmd = [sys.executable, __file__, "--worker", method, "--model-dir", model_dir, "--contexts", str(a.contexts),
               "--queries", str(a.queries), "--reps", str(a.reps), "--threads", str(a.threads)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=os.environ)
        results[method] = json.loads(out.stdout.strip().splitlines()[-1])
    first = next(iter(results.values()))
    print(f"workload: {first['pairs']} pairs ({a.contexts} contexts x {a.queries} queries), ~300-token prompt, "
          f"{'tiny llama' if a.model_dir is None else a.model_dir}, {a.threads} thread(s), median of {a.reps}")
    print(f"{'scorer':<8} {'wall s':>8} {'forwarded':>10} {'unique':>8} {'fwd/unique':>10} {'peak MB':>8} {'max |diff|':>11}")
    for r in results.values():
        ratio = r["tokens_forwarded"] / r["unique_tokens"]
        diff = max(abs(x - y) for x, y in zip(r["logprobs"], first["logprobs"]))
        print(f"{r['method']:<8} {r['median_s']:>8.2f} {r['tokens_forwarded']:>10} {r['unique_tokens']:>8} "
              f"{ratio:>10.2f} {r['peak_rss_mb_above_model']:>8.1f} {diff:>11.2e}")
    for slow in list(results)[1:]:
        print(f"speed-up ({slow} / {first['method']}): {results[slow]['median_s'] / first['median_s']:.2f}x")

if __name__ == "__main__":
    main()
