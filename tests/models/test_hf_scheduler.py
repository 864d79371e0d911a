"""The hf log-likelihood scheduler: what it shares, the plain batched path, the token budget, OOM halving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from proctor.core.model import LoglikelihoodRequest
from proctor.models.hf import HFModel
from proctor.models.hf.engine import gather
from proctor.models.hf.trie import plan

WORDS = ["model", "answer", "question", "paragraph", "reading", "careful", "editors", "policy", "text", "language", "large", "generate"]


def _sentence(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def _direct(m: HFModel, req: LoglikelihoodRequest) -> float:
    p = m.prepare(req)
    with torch.no_grad():
        logp = torch.log_softmax(m.model(torch.tensor([p.seq])).logits.float(), -1)[0]
    return sum(float(logp[i - 1, p.seq[i]]) for i in range(p.cont_start, len(p.seq)))


def test_plan_shares_a_long_prefix() -> None:
    prefix = list(range(100, 200))
    inputs = [prefix + [i, i + 1, i + 2] for i in range(10)]
    forest, paths, unique = plan(inputs, share=True)
    (root,) = forest.values()
    assert root.tokens == prefix and len(root.children) == 10
    assert all(paths[tuple(s)][0] is root and paths[tuple(s)][1].tokens == s[100:] for s in inputs)
    assert unique == 100 + 30


def test_plan_keeps_short_prefixes_whole() -> None:
    # three shared tokens before 10 long, distinct tails: sharing would save 27 tokens for 10 tree rows; the
    # trie has only two children under them (the tails' first tokens), but the rows are counted after merging
    inputs = [[1, 2, 3, 10 + i % 2] + [100 + i] * 50 for i in range(10)]
    forest, paths, unique = plan(inputs, share=True)
    assert len(forest) == 10 and all(not n.children and n.start == 0 for n in forest.values())
    assert [paths[tuple(s)] for s in inputs] == [[forest[tuple(s)]] for s in inputs]
    assert unique == 3 + 2 + 500


def test_plan_without_sharing_and_duplicates() -> None:
    prefix = list(range(100, 200))
    inputs = [prefix + [1], prefix + [2], prefix]
    forest, _, _ = plan(inputs, share=False)
    assert len(forest) == 3 and all(not n.children for n in forest.values())
    forest, paths, _ = plan(inputs, share=True)  # an input ending where the shared prefix ends is that edge
    (root,) = forest.values()
    assert paths[tuple(prefix)] == [root] and len(root.children) == 2


def test_gather_equals_log_softmax() -> None:
    logits = torch.randn(3, 4, 50)
    queries = [(0, 1, 7), (0, 1, 9), (2, 3, int(logits[2, 3].argmax())), (1, 0, 0)]
    got = gather(logits, queries)
    logp = torch.log_softmax(logits, -1)
    for (r, c, t), (lp, greedy) in zip(queries, got):
        assert lp == pytest.approx(float(logp[r, c, t]), abs=1e-5)
        assert greedy == (t == int(logits[r, c].argmax()))


def _unshared_requests() -> list[LoglikelihoodRequest]:
    """Contexts of very different lengths with nothing worth sharing (plain path), one- and multi-token answers."""
    return [LoglikelihoodRequest(_sentence(i, 3 + (i * 11) % 40), " " + _sentence(i + 1, 1 + i % 3)) for i in range(14)]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_plain_path_matches_direct_at_any_batch_and_budget(arch: str, request: pytest.FixtureRequest) -> None:
    model_dir: Path = request.getfixturevalue("tiny_model_dir" if arch == "llama" else "tiny_gpt2_dir")
    reqs = _unshared_requests()
    runs = {}
    for bs, budget in [(32, None), (1, None), (32, 96)]:
        m = HFModel(str(model_dir), batch_size=bs, max_batch_tokens=budget, prefix_costs=(16, 32))
        runs[(bs, budget)] = (m, m.loglikelihood_sync(reqs))
        assert m.stats["shared_roots"] == 0 and m.stats["plain_sequences"] == len(reqs)
        assert m.stats["tokens_forwarded"] == m.stats["scheduled_tokens"]
    m32, r32 = runs[(32, None)]
    for i, req in enumerate(reqs):
        assert r32[i].logprob == pytest.approx(_direct(m32, req), abs=1e-4)
        for _, other in runs.values():
            assert abs(other[i].logprob - r32[i].logprob) <= 1e-5 and other[i].is_greedy == r32[i].is_greedy
    m1 = runs[(1, None)][0]
    assert m1.stats["tokens_padded"] == m1.stats["tokens_forwarded"]  # one row per pass: no padding
    assert runs[(32, 96)][0].stats["forward_calls"] > m32.stats["forward_calls"]  # the budget cut the batches
    assert m32.stats["tokens_padded"] < 1.6 * m32.stats["tokens_forwarded"]  # length-sorted: little padding


class _Spy:
    """Wraps a model: records each call's keyword arguments; raises out-of-memory on batches over `max_rows`."""

    def __init__(self, model: Any, max_rows: int = 10**9) -> None:
        self.model, self.max_rows, self.calls = model, max_rows, []  # type: list[dict[str, Any]]
        self.config = model.config

    def __call__(self, **kw: Any) -> Any:
        self.calls.append(kw)
        if kw["input_ids"].shape[0] > self.max_rows:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return self.model(**kw)


def test_equal_lengths_pass_no_mask(tiny_model_dir: Path) -> None:
    # one length, nothing shared: plain causal attention (SDPA's fast kernels), no mask, no position ids
    m = HFModel(str(tiny_model_dir), prefix_costs=(16, 32))
    by_length: dict[int, list[LoglikelihoodRequest]] = {}
    for w in WORDS:
        req = LoglikelihoodRequest(f"{w} and {w}", " text")
        by_length.setdefault(len(m.prepare(req).seq), []).append(req)
    reqs = max(by_length.values(), key=len)
    assert len(reqs) >= 3
    spy = _Spy(m.model)
    m.engine.model = spy
    got = m.loglikelihood_sync(reqs)
    (call,) = spy.calls
    assert "attention_mask" not in call and "position_ids" not in call and call["logits_to_keep"] == 1
    for req, r in zip(reqs, got):
        assert r.logprob == pytest.approx(_direct(m, req), abs=1e-4)


def test_out_of_memory_halves_the_batch(tiny_model_dir: Path) -> None:
    reqs = _unshared_requests()
    m = HFModel(str(tiny_model_dir), batch_size=32, prefix_costs=(16, 32))
    want = m.loglikelihood_sync(reqs)
    budget = m.engine.token_budget
    m.engine.model = _Spy(m.model, max_rows=3)
    m.reset_stats()
    got = m.loglikelihood_sync(reqs)
    assert m.stats["oom_splits"] > 0 and m.engine.token_budget < budget
    for a, b in zip(want, got):
        assert abs(a.logprob - b.logprob) <= 1e-5
    m.engine.model = _Spy(m.model, max_rows=0)  # even one row does not fit: the error is raised, not swallowed
    with pytest.raises(torch.OutOfMemoryError):
        m.loglikelihood_sync(reqs[:2])


def test_plan_on_the_cpu_shares_every_saved_token() -> None:
    inputs = [[1, 2, 3, 10 + i % 2] + [100 + i] * 50 for i in range(10)]
    forest, _, unique = plan(inputs, share=True, costs=(0, 0))
    (root,) = forest.values()
    assert root.tokens == [1, 2, 3] and sum(n.tokens and 1 for n in root.children.values()) == 2
    assert unique == 3 + 2 + 500


def test_bad_token_budget(tiny_model_dir: Path) -> None:
    from proctor.util.errors import ProctorError

    with pytest.raises(ProctorError, match="max_batch_tokens"):
        HFModel(str(tiny_model_dir), max_batch_tokens=0)
