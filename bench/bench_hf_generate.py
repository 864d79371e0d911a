"""Batched vs one-by-one generation in HFModel, in the same process on the same model.

Workload: --prompts chat prompts of mixed length (about 10 to 80 tokens), greedy, --max-tokens new tokens
each (the tiny model rarely emits EOS, so nearly every request runs to max_tokens), plus the same prompts
sampled with a seed each. Each mode runs --reps times, alternating, and the median wall time is reported;
the batched outputs are checked to equal the one-by-one outputs.

    python bench/bench_hf_generate.py [--prompts 64] [--max-tokens 32] [--batch-size 16] [--reps 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

WORDS = [
    "The",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    ".",
    "True",
    "False",
    "A",
    "B",
    "C",
    "D",
    "physics",
    "law",
    "history",
]


def prompts(n: int) -> list[str]:
    """Deterministic prompts of mixed length."""
    return [" ".join(WORDS[(i * 5) % len(WORDS) :][: 2 + (i * 7) % 17]) * (1 + i % 4) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--model-dir", default=None, help="a local model (default: proctor.models.tiny llama, built once)"
    )
    a = ap.parse_args()

    import torch

    from proctor.core.model import GenerateRequest, GenerationSpec, Message
    from proctor.models.hf import HFModel
    from proctor.models.tiny import build_tiny_model

    torch.set_num_threads(a.threads)
    model_dir = a.model_dir or str(build_tiny_model(Path(tempfile.gettempdir()) / "proctor-bench-tiny-llama"))
    batched = HFModel(model_dir, batch_size=a.batch_size)
    single = HFModel(model_dir, batch_size=1)
    single.model = batched.model  # the very same weights
    texts = prompts(a.prompts)
    workloads = {
        "greedy": [
            GenerateRequest((Message("user", t),), GenerationSpec(max_tokens=a.max_tokens)) for t in texts
        ],
        "sampled": [
            GenerateRequest(
                (Message("user", t),),
                GenerationSpec(temperature=0.8, top_p=0.95, max_tokens=a.max_tokens, seed=i),
            )
            for i, t in enumerate(texts)
        ],
    }
    lengths = [len(batched.render(r)) for r in workloads["greedy"]]
    print(
        f"{a.prompts} prompts ({min(lengths)}-{max(lengths)} tokens), max_tokens {a.max_tokens}, "
        f"batch size {a.batch_size}, {a.threads} thread(s), {batched.device}, median of {a.reps}"
    )
    print(
        f"{'workload':<8} {'one-by-one s':>12} {'batched s':>10} {'speedup':>8} {'out tokens':>10} {'identical':>9}"
    )
    for name, reqs in workloads.items():
        times: dict[str, list[float]] = {"single": [], "batched": []}
        outs = {}
        for _ in range(a.reps):
            for label, m in (("single", single), ("batched", batched)):
                t0 = time.perf_counter()
                outs[label] = m.generate_sync(reqs)
                times[label].append(time.perf_counter() - t0)
        same = sum(
            (x.text, x.output_tokens) == (y.text, y.output_tokens)
            for x, y in zip(outs["single"], outs["batched"])
        )
        t1, tb = statistics.median(times["single"]), statistics.median(times["batched"])
        n_out = sum(g.output_tokens or 0 for g in outs["batched"])
        print(f"{name:<8} {t1:>12.2f} {tb:>10.2f} {t1 / tb:>7.1f}x {n_out:>10} {same:>5}/{len(reqs)}")


if __name__ == "__main__":
    main()
