"""Scaling: the cross-product log-likelihood workload at 1×, 4× and 16× the contexts, each in a fresh
process on the HF backend (1 torch thread); wall time and peak RSS (includes torch + model, ~the 1× figure),
and how they grow.

    .venv/bin/python bench/bench_scaling.py [--base 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import cross_product

MODEL_DIR = Path(tempfile.gettempdir()) / "proctor-bench-tiny"


def child(n_contexts: int) -> None:
    import torch

    from proctor.core.model import LoglikelihoodRequest
    from proctor.models.hf import HFModel

    torch.set_num_threads(1)
    model = HFModel(str(MODEL_DIR), batch_size=32, dtype="float32", device="cpu")
    pairs = cross_product(n_contexts=n_contexts)[0]
    model.loglikelihood_sync([LoglikelihoodRequest(c, q) for c, q in pairs[:8]])  # warm-up
    model.reset_stats()
    t0 = time.perf_counter()
    asyncio.run(model.loglikelihood([LoglikelihoodRequest(c, q) for c, q in pairs]))
    wall = time.perf_counter() - t0
    print(json.dumps({"pairs": len(pairs), "wall_s": wall, "tokens_forwarded": model.stats["tokens_forwarded"],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=int, default=50)
    ap.add_argument("--child", type=int)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    from proctor.models.tiny import TinyShape, build_tiny_model

    build_tiny_model(MODEL_DIR, shape=TinyShape(hidden_size=128, num_layers=4))
    print(f"cross-product workload, {args.base}/{4 * args.base}/{16 * args.base} contexts x 4 queries, "
          "tiny llama (hidden 128, 4 layers), batch 32, 1 torch thread, fresh process each")
    print("| size | pairs | tokens forwarded | wall s | time vs 1× | s / 1k pairs | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    first = None
    for mult in (1, 4, 16):
        out = subprocess.run([sys.executable, __file__, "--child", str(args.base * mult)],
                             capture_output=True, text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"}).stdout
        r = json.loads(out.strip().splitlines()[-1])
        first = first or r["wall_s"]
        print(f"| {mult}× | {r['pairs']} | {r['tokens_forwarded']} | {r['wall_s']:.2f} | {r['wall_s'] / first:.1f}× "
              f"| {1000 * r['wall_s'] / r['pairs']:.2f} | {r['peak_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
