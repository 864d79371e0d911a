"""lm-evaluation-harness as a test oracle: its `HFLM` and proctor's hf backend give the same log-likelihoods.

Same tiny model, same (context, continuation) pairs, float32 on the CPU. The pairs avoid a context ending in
whitespace, where the two differ by design (lm-eval moves the space into the continuation; proctor scores the
merged token, docs/hf.md). lm_eval is in the dev extra; without it the test is skipped, except under CI.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

if importlib.util.find_spec("lm_eval") is None and not os.environ.get("CI"):
    pytest.skip("lm_eval is not installed (pip install -e '.[dev]'); under CI this test must run", allow_module_level=True)

from proctor.core.model import LoglikelihoodRequest
from proctor.models.hf import HFModel

PROMPT = "The quick brown fox jumps over the lazy dog. Large language models generate text. " * 5
PAIRS = [
    (PROMPT + "Question: is the fox quick?\nAnswer:", " True"),
    (PROMPT + "Question: is the fox quick?\nAnswer:", " False"),
    (PROMPT + "Question: is the dog lazy?\nAnswer:", " yes, it is"),
    ("Large language models", " generate text"),
    ("The answer is", " (A) physics"),
    ("The answer is", "n't obvious"),
    ("", "The quick brown fox"),  # empty context: both condition on the BOS/EOS token
    ("é ü", " ö and more"),
] + [(f"Question: {i} + {i} =", f" {2 * i}") for i in range(12)]


def _lmeval(model_dir: Path, pairs: list[tuple[str, str]], add_bos: bool) -> list[tuple[float, bool]]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(model_dir), device="cpu", dtype="float32", batch_size=8, add_bos_token=add_bos)
    insts = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    return [(float(lp), bool(g)) for lp, g in lm.loglikelihood(insts, disable_tqdm=True)]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@pytest.mark.parametrize("share_prefixes", [True, False])
def test_loglikelihood_equals_lm_eval(arch: str, share_prefixes: bool, request: pytest.FixtureRequest) -> None:
    model_dir = request.getfixturevalue("tiny_model_dir" if arch == "llama" else "tiny_gpt2_dir")
    ours = HFModel(str(model_dir), dtype="float32", batch_size=8, share_prefixes=share_prefixes)
    add_bos = bool(ours.prepare(LoglikelihoodRequest("a", " b")).seq[0] == ours.tokenizer.bos_token_id)
    theirs = _lmeval(model_dir, PAIRS, add_bos)
    got = ours.loglikelihood_sync([LoglikelihoodRequest(c, q) for c, q in PAIRS])
    for (c, q), mine, (lp, greedy) in zip(PAIRS, got, theirs):
        assert mine.error is None, (c, q)
        assert abs(mine.logprob - lp) <= 1e-4, (c[-30:], q, mine.logprob, lp)
        assert mine.is_greedy == greedy, (c[-30:], q)
