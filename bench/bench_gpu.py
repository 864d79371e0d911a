"""Log-likelihood on a GPU (or the CPU): proctor's hf backend vs lm-evaluation-harness's HFLM, five workloads.

A random-weight llama of Llama-3.2-1B's shape (hidden 2048, 16 layers, 32 heads, 8 KV heads, vocabulary 128,256)
with a small BPE tokenizer trained on the spot; the same requests to both sides, the same batch size, one process,
alternating who goes first, best of `--reps` after a warm-up. Also: parity against a direct full-sequence forward
pass in float32 (the truth) for both sides in float32 and the benchmark dtype, proctor's batch 1 vs 32, and each
side's peak GPU memory per workload. Workloads (as in ../shared/tools/gpu-bench/ll_bench.py):
  suite         one ~1k-token prompt, N contexts x 4 three-word queries
  mc five-shot  one ~4k-token prefix, N questions x 10 letters
  mc zero-shot  N ~300-token questions x 10 letters
  unique        10N ~300-token contexts, one letter each
  no sharing    4N pairs, 20-400-word contexts, 1-12-word continuations

    python bench/bench_gpu.py                       # CUDA, full size, bfloat16, N=200
    python bench/bench_gpu.py --cpu-large-vocab     # CPU: hidden 256, 2 layers, 32k vocabulary, float32, N=10,
                                                    # batch 8, no five-shot (lm-eval's full logits would need GBs)
    python bench/bench_gpu.py --small               # tiny shapes, any machine: checks the script runs
Prints a markdown table; writes --out (default $OUT/bench_gpu.json or ./bench_gpu.json).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
WORDS = ["model", "answer", "question", "paragraph", "reading", "careful", "editors", "policy", "text", "language", "large", "generate", "summary", "article", "source", "passage", "true", "false", "correct", "based", "above", "following", "result", "evidence", "claim"]
SHAPES = {
    "full": {"vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
             "num_attention_heads": 32, "num_key_value_heads": 8},
    "cpu-large-vocab": {"vocab_size": 32000, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                        "num_attention_heads": 4, "num_key_value_heads": 2},
    "small": {"vocab_size": 4096, "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2},
}
Pairs = list[tuple[str, str]]


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="tiny shapes, N=10 (a smoke run)")
    ap.add_argument("--cpu-large-vocab", action="store_true", help="CPU, float32, 32k vocabulary, N=10, batch 8")
    ap.add_argument("--n", type=int, help="workload size N (default 200; 10 with --cpu-large-vocab or --small)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", help="timed dtype (default bfloat16 on CUDA, float32 on the CPU)")
    ap.add_argument("--batch-size", type=int, help="both sides (default 32; 8 with --cpu-large-vocab)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--workloads", help="comma-separated subset of: suite,five-shot,zero-shot,unique,no-sharing")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "bench_gpu.json"))
    a = ap.parse_args()
    a.shape = "small" if a.small else "cpu-large-vocab" if a.cpu_large_vocab else "full"
    a.n = a.n or (10 if a.small or a.cpu_large_vocab else 200)
    a.batch_size = a.batch_size or (8 if a.cpu_large_vocab else 32)
    if a.cpu_large_vocab and not a.workloads:
        a.workloads = "suite,zero-shot,unique,no-sharing"
    a.dtype = a.dtype or ("bfloat16" if a.device.startswith("cuda") else "float32")
    return a


def build_model(path: Path, shape: str, device: str) -> Path:
    """A random-weight llama of `shape` and a tokenizer trained on the workloads' words, saved under `path`."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from proctor.models.tiny import build_tiny_model

    tokdir = build_tiny_model(path.with_name(path.name + "-tok"), vocab_size=2000,
                              corpus=" ".join(WORDS * 20) + " A B C D E F G H I J")
    tok = AutoTokenizer.from_pretrained(str(tokdir))
    conf = LlamaConfig(**SHAPES[shape], max_position_embeddings=8192, bos_token_id=tok.bos_token_id,
                       eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=True,
                       rope_theta=500000.0)
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(conf).to(torch.bfloat16)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    del model
    _free()
    return path


def _free() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def workloads(n: int) -> dict[str, Pairs]:
    """The five workloads, deterministic for a given N."""
    rng = random.Random(0)
    prompt, shots = _sentence(rng, 300), _sentence(rng, 1200)
    contexts = [f"{prompt}\n{_sentence(rng, 20)}\nThe correct answer is:" for _ in range(n)]
    queries = [" " + _sentence(rng, 3) for _ in range(4)]
    five = [f"{shots}\nQuestion: {_sentence(rng, 60)}\nAnswer:" for _ in range(n)]
    zero = [f"Question: {_sentence(rng, 90)}\nAnswer:" for _ in range(n)]
    return {
        "suite": [(c, q) for c in contexts for q in queries],
        "five-shot": [(q, f" {letter}") for q in five for letter in "ABCDEFGHIJ"],
        "zero-shot": [(q, f" {letter}") for q in zero for letter in "ABCDEFGHIJ"],
        "unique": [(f"Question: {_sentence(rng, 90)}\nAnswer:", f" {rng.choice('ABCDEFGHIJ')}") for _ in range(10 * n)],
        "no-sharing": [(_sentence(rng, rng.randint(20, 400)), " " + _sentence(rng, rng.randint(1, 12)))
                       for _ in range(4 * n)],
    }


def truth(path: Path, pairs: Pairs, dtype: torch.dtype, device: str) -> list[float]:
    """Log-probs from a direct full-sequence forward pass, one request at a time, log-softmax in float32."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype).to(device).eval()
    out = []
    with torch.inference_mode():
        for context, continuation in pairs:
            ctx, full = tok(context)["input_ids"], tok(context + continuation)["input_ids"]
            k = next((i for i, (a, b) in enumerate(zip(ctx, full)) if a != b), min(len(ctx), len(full)))
            logp = torch.log_softmax(model(torch.tensor([full], device=device)).logits[0].float(), -1)
            out.append(sum(float(logp[i - 1, full[i]]) for i in range(k, len(full))))
    del model
    _free()
    return out


def run_proctor(model: Any, pairs: Pairs) -> list[float]:
    from proctor.core.model import LoglikelihoodRequest

    return [r.logprob for r in asyncio.run(model.loglikelihood([LoglikelihoodRequest(c, q) for c, q in pairs]))]


def run_lmeval(lm: Any, pairs: Pairs) -> list[float]:
    from lm_eval.api.instance import Instance

    insts = [Instance("loglikelihood", {}, p, i) for i, p in enumerate(pairs)]
    return [float(x[0]) for x in lm.loglikelihood(insts, disable_tqdm=True)]


def parity(a: argparse.Namespace, path: Path, sample: Pairs) -> dict[str, Any]:
    """Max |difference| against the float32 truth, and proctor's batch 1 vs batch 32."""
    from lm_eval.models.huggingface import HFLM

    from proctor.models.hf import HFModel

    ref = truth(path, sample, torch.float32, a.device)
    got: dict[str, list[float]] = {}
    for dt in dict.fromkeys(["float32", a.dtype]):
        for bs in (1, 32):
            m = HFModel(str(path), dtype=dt, device=a.device, batch_size=bs)
            got[f"proctor {dt} batch {bs}"] = run_proctor(m, sample)
            del m
            _free()
        lm = HFLM(pretrained=str(path), device=a.device, dtype=dt, batch_size=a.batch_size, add_bos_token=True)
        got[f"lm-eval {dt} batch {a.batch_size}"] = run_lmeval(lm, sample)
        del lm
        _free()
    if a.dtype != "float32":
        got[f"direct forward {a.dtype}"] = truth(path, sample, getattr(torch, a.dtype), a.device)
    diff = {k: max(abs(x - y) for x, y in zip(v, ref)) for k, v in got.items()}
    batch = {dt: max(abs(x - y) for x, y in zip(got[f"proctor {dt} batch 1"], got[f"proctor {dt} batch 32"]))
             for dt in dict.fromkeys(["float32", a.dtype])}
    return {"max_abs_diff_vs_float32_truth": diff, "batch_1_vs_32": batch}


def _timed(run: Any, device: str) -> tuple[float, int]:
    """Seconds for `run()`, and the peak GPU memory it allocated (0 on the CPU)."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    run()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t, torch.cuda.max_memory_allocated() if cuda else 0


def speed(a: argparse.Namespace, path: Path, loads: dict[str, Pairs]) -> dict[str, Any]:
    """Best of `reps` per side and workload, alternating who goes first; plus proctor's plan counters."""
    from lm_eval.models.huggingface import HFLM

    from proctor.models.hf import HFModel

    lm = HFLM(pretrained=str(path), device=a.device, dtype=a.dtype, batch_size=a.batch_size, add_bos_token=True)
    pm = HFModel(str(path), dtype=a.dtype, device=a.device, batch_size=a.batch_size)
    out: dict[str, Any] = {}
    for name, pairs in loads.items():
        run_proctor(pm, pairs[:16])
        run_lmeval(lm, pairs[:16])
        times: dict[str, list[tuple[float, int]]] = {"p": [], "l": []}
        for rep in range(a.reps):
            for who in ("pl" if rep % 2 == 0 else "lp"):
                pm.reset_stats()
                side = run_proctor if who == "p" else run_lmeval
                times[who].append(_timed(lambda s=side, m=pm if who == "p" else lm, p=pairs: s(m, p), a.device))
        tp, tl = min(t for t, _ in times["p"]), min(t for t, _ in times["l"])
        out[name] = {"requests": len(pairs), "proctor_s": round(tp, 3), "lmeval_s": round(tl, 3),
                     "ratio": round(tp / tl, 3), "proctor_peak_gib": round(max(m for _, m in times["p"]) / 2**30, 2),
                     "lmeval_peak_gib": round(max(m for _, m in times["l"]) / 2**30, 2), "proctor_stats": dict(pm.stats)}
        print(f"| {name} | {len(pairs)} | {tp:.2f} | {tl:.2f} | **{tp / tl:.2f}** | "
              f"{out[name]['proctor_peak_gib']} | {out[name]['lmeval_peak_gib']} |", flush=True)
    return out


def main() -> None:
    a = _args()
    import lm_eval
    import transformers

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "0")) or torch.get_num_threads())
    res: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu", "shape": a.shape,
        "n": a.n, "dtype": a.dtype, "batch_size": a.batch_size, "reps": a.reps, "torch": torch.__version__,
        "transformers": transformers.__version__, "lm_eval": lm_eval.__version__, "threads": torch.get_num_threads()}
    print(json.dumps(res), flush=True)
    path = build_model(Path(os.environ.get("TMPDIR", "/tmp")) / f"proctor-bench-gpu-{a.shape}", a.shape, a.device)
    loads = workloads(a.n)
    if a.workloads:
        loads = {k: v for k, v in loads.items() if k in a.workloads.split(",")}
    sample = [p for w in loads.values() for p in w[:: max(1, len(w) // 8)]][:40]
    res["parity"] = parity(a, path, sample)
    print(json.dumps(res["parity"], indent=1), flush=True)
    print("| workload | requests | proctor s | lm-eval s | proctor / lm-eval | proctor peak GiB | lm-eval peak GiB |")
    print("|---|---:|---:|---:|---:|---:|---:|", flush=True)
    res["speed"] = speed(a, path, loads)
    res["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    Path(a.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
