"""HFModel: log-probs equal a direct forward pass, do not depend on batch size, and share prefixes."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from proctor.core.model import GenerateRequest, Generation, GenerationSettings, LoglikelihoodRequest, Message
from proctor.models.hf import HFModel
from proctor.util.errors import ProctorError

PROMPT = "The quick brown fox jumps over the lazy dog. " * 6
CONTEXTS = ["True or False?", "", "Large language models"]
QUERIES = [" True", "n't", "\nAnswer: 42", "é ü"]


def _requests() -> list[LoglikelihoodRequest]:
    reqs = []
    for c in CONTEXTS:
        for q in QUERIES:
            reqs.append(LoglikelihoodRequest(PROMPT + c + "\n", q))
            reqs.append(LoglikelihoodRequest(c, q))  # short, and the empty context
    return reqs


def _direct(m: HFModel, req: LoglikelihoodRequest) -> tuple[float, int, bool]:
    """One full forward pass over the whole scoring sequence."""
    p = m.prepare(req)
    with torch.no_grad():
        logp = torch.log_softmax(m.model(torch.tensor([p.seq])).logits.float(), -1)[0]
    positions = range(p.cont_start, len(p.seq))
    lp = sum(float(logp[i - 1, p.seq[i]]) for i in positions)
    greedy = all(int(logp[i - 1].argmax()) == p.seq[i] for i in positions)
    return lp, len(p.seq) - p.cont_start, greedy


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model_dir(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue("tiny_model_dir" if request.param == "llama" else "tiny_gpt2_dir")


def test_matches_direct_forward_and_batch_size(model_dir: Path) -> None:
    reqs = _requests()
    m32 = HFModel(str(model_dir), batch_size=32)
    m1 = HFModel(str(model_dir), batch_size=1)
    r32 = asyncio.run(m32.loglikelihood(reqs))
    r1 = m1.loglikelihood_sync(reqs)
    for req, a, b in zip(reqs, r32, r1):
        lp, n, greedy = _direct(m32, req)
        assert a.error is None
        assert a.n_tokens == n > 0
        assert a.logprob == pytest.approx(lp, abs=1e-4)
        assert a.is_greedy == greedy
        assert abs(a.logprob - b.logprob) <= 1e-5
    # on the CPU every shared token pays: one trie (all share the BOS), each token forwarded exactly once
    for m in (m32, m1):
        assert m.stats["tokens_forwarded"] == m.stats["scheduled_tokens"] == m.stats["unique_tokens"]
    # the GPU's cost model: the long prompt shared, the short contexts whole (plain path); same numbers
    gpu = HFModel(str(model_dir), batch_size=32, prefix_costs=(16, 32))
    for a, b in zip(r32, gpu.loglikelihood_sync(reqs)):
        assert abs(a.logprob - b.logprob) <= 1e-5 and a.is_greedy == b.is_greedy and a.n_tokens == b.n_tokens
    assert gpu.stats["tokens_forwarded"] == gpu.stats["scheduled_tokens"] > gpu.stats["unique_tokens"]
    assert gpu.stats["shared_roots"] == 1 and gpu.stats["plain_sequences"] > 0


def test_prefix_shared_once(tiny_model_dir: Path) -> None:
    m = HFModel(str(tiny_model_dir), batch_size=8)
    ctxs = [PROMPT + f"Question: {i} {i + 1}\n" for i in range(6)]
    reqs = [LoglikelihoodRequest(c, q) for c in ctxs for q in ["True", "False", "A B", "C D E"]]
    res = m.loglikelihood_sync(reqs)
    naive = sum(len(m.prepare(r).seq) - 1 for r in reqs)
    assert m.stats["tokens_forwarded"] == m.stats["scheduled_tokens"]
    assert m.stats["tokens_forwarded"] < naive / 4
    unshared = HFModel(str(tiny_model_dir), batch_size=8, share_prefixes=False)
    res2 = unshared.loglikelihood_sync(reqs)
    assert unshared.stats["tokens_forwarded"] == naive
    for a, b in zip(res, res2):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-5)


def test_bos_and_boundaries(tiny_model_dir: Path, tiny_gpt2_dir: Path) -> None:
    llama = HFModel(str(tiny_model_dir))
    bos = llama.tokenizer.bos_token_id
    p = llama.prepare(LoglikelihoodRequest("The answer is:", " True"))
    assert p.seq[0] == bos and p.seq.count(bos) == 1
    assert p.seq[p.cont_start:] == llama.tokenizer(" True", add_special_tokens=False)["input_ids"]
    # a trailing space in the context merges with the word: the merged token is scored, not the bare word
    merged = llama.prepare(LoglikelihoodRequest("The answer is: ", "True"))
    assert merged.seq == p.seq and merged.cont_start == p.cont_start
    # a tokenizer that adds no BOS (as GPT-2's): an empty context is conditioned on the BOS/EOS token
    gpt2 = HFModel(str(tiny_gpt2_dir))
    gpt2._prefix = []
    assert gpt2.encode("x")[0] != gpt2.tokenizer.bos_token_id
    empty = gpt2.prepare(LoglikelihoodRequest("", "True"))
    assert empty.cont_start == 1 and empty.seq[0] == gpt2.tokenizer.bos_token_id
    # empty continuation: nothing scored
    (r,) = gpt2.loglikelihood_sync([LoglikelihoodRequest("abc", "")])
    assert (r.logprob, r.n_tokens, r.is_greedy) == (0.0, 0, True)


def test_max_length_truncates_left(tiny_model_dir: Path) -> None:
    m = HFModel(str(tiny_model_dir), max_length=16)
    short, long_cont = m.loglikelihood_sync([
        LoglikelihoodRequest(PROMPT, " True"),
        LoglikelihoodRequest("a", " True" * 40),
    ])
    assert short.error is None and short.n_tokens >= 1
    assert long_cont.error is not None and "max_length" in long_cont.error


def test_huge_prompt_is_clipped_before_tokenizing(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22 item 13: a multi-megabyte context costs what its kept tail costs, and scores the same as a
    context cut by hand far beyond the model's reach; a continuation that cannot fit is an error record."""
    m = HFModel(str(model_dir), max_length=32)
    huge = "The quick brown fox jumps over the lazy dog. " * 100_000  # 4.5 MB
    seen: list[int] = []
    tokenize = type(m.tokenizer).__call__

    def recording(self: object, text: object, *args: object, **kwargs: object) -> object:
        seen.extend(len(t) for t in (text if isinstance(text, list) else [text]))
        return tokenize(self, text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(m.tokenizer), "__call__", recording)
    far = huge[-4 * m.max_chars:]  # tokenized whole: still far more than max_length tokens
    big, cut, too_long = m.loglikelihood_sync([
        LoglikelihoodRequest(huge, " True"), LoglikelihoodRequest(far, " True"),
        LoglikelihoodRequest("Q:", " x" * (m.max_chars + 1)),
    ])
    assert big.error is None and big.logprob == pytest.approx(cut.logprob, abs=1e-5) and big.n_tokens == cut.n_tokens
    assert max(seen) <= 4 * m.max_chars + len(" True") < len(huge) // 10
    assert too_long.error is not None and "cannot fit in max_length" in too_long.error


def test_generate_greedy_stop_and_counts(tiny_model_dir: Path) -> None:
    m = HFModel(str(tiny_model_dir))
    req = GenerateRequest((Message("user", "The quick brown fox"),), GenerationSettings(max_tokens=8))
    a, b = m.generate_sync([req, req])
    assert a.error is None and a.text == b.text
    assert a.input_tokens == len(m.render(req)) and 0 < a.output_tokens <= 8
    assert a.finish_reason in ("length", "stop") and a.latency_s is not None
    if a.text.strip():
        stop = a.text.strip()[:1]
        (c,) = m.generate_sync([GenerateRequest(req.messages, GenerationSettings(max_tokens=8, stop=(stop,)))])
        assert stop not in c.text and c.finish_reason == "stop"
    sampled = GenerateRequest(req.messages, GenerationSettings(temperature=1.0, max_tokens=6, seed=3))
    (x,), (y,) = m.generate_sync([sampled]), m.generate_sync([sampled])
    assert x.text == y.text  # same seed, same sample


def test_describe_and_bad_options(tiny_model_dir: Path) -> None:
    from proctor.util.errors import ProctorError

    d = HFModel(str(tiny_model_dir)).describe()
    assert d["dtype"] == "float32" and d["device"] == "cpu" and "loglikelihood" in d["capabilities"]
    with pytest.raises(ProctorError):
        HFModel(str(tiny_model_dir), dtype="float8")
    with pytest.raises(ProctorError):
        HFModel(str(tiny_model_dir / "missing"))


# ---------------------------------------------------------------------- batched generation
WORDS = ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", ".",
         "True", "False", "A", "B", "C", "D"]


def _prompts(n: int) -> list[str]:
    """Mixed lengths (about 8 to 60 tokens), so batches are left-padded by different amounts."""
    return [" ".join(WORDS[(i * 3) % len(WORDS) :][: 1 + (i * 7) % 13]) * (1 + i % 4) for i in range(n)]


def _reqs(prompts: list[str], **settings: object) -> list[GenerateRequest]:
    return [GenerateRequest((Message("user", p),), GenerationSettings(**settings)) for p in prompts]  # type: ignore[arg-type]


def _view(g: Generation) -> tuple[object, ...]:
    """Everything but the latency."""
    return (g.text, g.finish_reason, g.input_tokens, g.output_tokens, g.error)


def _greedy_by_hand(m: HFModel, prompt: list[int], n: int) -> list[int]:
    """Argmax of a full forward pass, one token at a time: no cache, no padding, no `generate`."""
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            seq.append(int(m.model(torch.tensor([seq])).logits[0, -1].argmax()))
    return seq[len(prompt) :]


def test_generate_batched_equals_unbatched(model_dir: Path) -> None:
    reqs = _reqs(_prompts(16), max_tokens=10)
    m1, m8 = HFModel(str(model_dir), batch_size=1), HFModel(str(model_dir), batch_size=8)
    one, eight = m1.generate_sync(reqs), asyncio.run(m8.generate(reqs))
    assert len({len(m8.render(r)) for r in reqs}) > 5  # really mixed lengths
    assert [_view(g) for g in eight] == [_view(g) for g in one]
    for req, g in zip(reqs[:3], eight):  # and both equal a hand-rolled greedy loop
        prompt = m8.render(req)
        assert g.input_tokens == len(prompt) and g.output_tokens == 10 and g.finish_reason == "length"
        assert g.text == m8.tokenizer.decode(_greedy_by_hand(m8, prompt, 10), skip_special_tokens=True)


def test_generate_stops_per_row(tiny_model_dir: Path) -> None:
    from proctor.models.hf import _Job

    m = HFModel(str(tiny_model_dir), batch_size=8)
    prompts = _prompts(8)
    free = m.generate_sync(_reqs(prompts, max_tokens=12))
    stop = next(g.text[3:5] for g in free if len(g.text) > 6 and g.text[3:5].strip())
    stopped = m.generate_sync(_reqs(prompts, max_tokens=12, stop=(stop, "\x00never")))
    alone = HFModel(str(tiny_model_dir), batch_size=1).generate_sync(_reqs(prompts, max_tokens=12, stop=(stop,)))
    assert [_view(g) for g in stopped] == [_view(g) for g in alone]
    hits = 0
    for p, f, s in zip(prompts, free, stopped):
        if stop in f.text:  # truncated at the stop; tokens counted up to the one that completed it
            hits += 1
            assert s.text == f.text[: f.text.index(stop)] and s.finish_reason == "stop"
            (toks,), _ = m._generate_batch([_Job(0, m.render(_reqs([p])[0]))], GenerationSettings(), 12)
            k = next(k for k in range(1, 13) if stop in m.tokenizer.decode(toks[:k], skip_special_tokens=True))
            assert s.output_tokens == k
        else:  # rows without the stop run to max_tokens, whatever their batch-mates did
            assert _view(s) == _view(f)
    assert hits >= 1


def test_generate_eos_per_row(tiny_model_dir: Path) -> None:
    from proctor.models.hf import _Job

    m = HFModel(str(tiny_model_dir), batch_size=8)
    prompts = _prompts(8)
    free = m.generate_sync(_reqs(prompts, max_tokens=10))
    (toks,), _ = m._generate_batch([_Job(0, m.render(_reqs(prompts[:1])[0]))], GenerationSettings(), 10)
    m._eos_ids = {toks[3]}  # pretend the 4th token of the first output is an EOS
    ended = m.generate_sync(_reqs(prompts, max_tokens=10))
    assert ended[0].finish_reason == "stop" and ended[0].output_tokens == toks.index(toks[3]) + 1  # EOS counted
    assert ended[0].text == m.tokenizer.decode(toks[: toks.index(toks[3])], skip_special_tokens=True)
    for f, e in zip(free, ended):
        assert f.text.startswith(e.text)
        assert (e.finish_reason == "length") == (e.output_tokens == 10 and _view(e) == _view(f))


def test_generate_seeded_sampling_is_batch_independent(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = _prompts(8)
    m = HFModel(str(model_dir), batch_size=8)
    seeded = [GenerateRequest((Message("user", p),), GenerationSettings(temperature=1.0, top_p=0.95, max_tokens=8, seed=i))
              for i, p in enumerate(prompts)]
    calls, real = [], m.model.generate
    monkeypatch.setattr(m.model, "generate", lambda **kw: calls.append(kw["input_ids"].shape[0]) or real(**kw))
    batch = m.generate_sync(seeded)
    assert calls == [8]  # eight seeds, one batch
    alone = [m.generate_sync([r])[0] for r in seeded[:3]]
    assert [_view(g) for g in alone] == [_view(g) for g in batch[:3]]
    assert [_view(g) for g in m.generate_sync(seeded[::-1])] == [_view(g) for g in batch[::-1]]
    # the seed matters: one prompt under eight seeds gives more than one sample
    same_prompt = [GenerateRequest(seeded[0].messages, GenerationSettings(temperature=1.5, max_tokens=4, seed=s))
                   for s in range(4)]
    assert len({g.text for g in m.generate_sync(same_prompt)}) > 1
    unseeded = m.generate_sync(_reqs(prompts[:4], temperature=1.0, max_tokens=4))
    assert all(g.error is None and g.output_tokens == 4 for g in unseeded)


def test_generate_failure_is_per_request(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = HFModel(str(tiny_model_dir), batch_size=8, max_length=72)
    prompts = _prompts(7) + ["fox " * 80]  # the last is longer than max_length
    good = m.generate_sync(_reqs(prompts[:7], max_tokens=6))
    res = m.generate_sync(_reqs(prompts, max_tokens=6))
    assert "max_length" in (res[7].error or "") and [_view(g) for g in res[:7]] == [_view(g) for g in good]
    assert all(g.error is None and g.input_tokens + g.output_tokens <= 72 for g in res[:7])
    # a batch that raises is split until only the request that fails is an error
    seen = {t for r in _reqs(prompts[:7]) for t in m.render(r)}
    poison = next(t for t in m.render(_reqs(["zq%$"])[0]) if t not in seen)
    real = m.model.generate

    def flaky(**kw: object) -> object:
        if (kw["input_ids"] == poison).any():  # type: ignore[operator]
            raise RuntimeError("CUDA out of memory (simulated)")
        return real(**kw)

    monkeypatch.setattr(m.model, "generate", flaky)
    res = m.generate_sync(_reqs(prompts[:3] + ["zq%$"] + prompts[3:7], max_tokens=6))
    assert res[3].error == "RuntimeError: CUDA out of memory (simulated)"
    assert [_view(g) for g in res[:3] + res[4:]] == [_view(g) for g in good]


def test_generate_template_error_and_budget(tiny_model_dir: Path) -> None:
    m = HFModel(str(tiny_model_dir), max_length=32)
    req = _reqs(["The quick brown fox"], max_tokens=None)[0]
    (g,) = m.generate_sync([req])
    assert g.error is None and g.input_tokens + g.output_tokens == 32  # no max_tokens: up to max_length
    with pytest.raises(ValueError, match="max_tokens"):  # the one generation record refuses a zero budget
        _reqs(["x"], max_tokens=0)
    x = _reqs(["x"], max_tokens=1)[0]  # one derived without a check (model_copy) still answers empty, never crashes
    (z,) = m.generate_sync([dataclasses.replace(x, settings=x.settings.model_copy(update={"max_tokens": 0}))])
    assert (z.text, z.output_tokens, z.finish_reason) == ("", 0, "length")
    m.tokenizer.chat_template = "{{ raise_exception('no system role') }}"
    (bad,) = m.generate_sync([req])
    assert bad.error is not None and "no system role" in bad.error


def _tree_requests() -> list[LoglikelihoodRequest]:
    """A trie with many siblings of different lengths, parents with a single child, and deep chains."""
    base = PROMPT + "Question:"
    reqs = []
    for i, ctx in enumerate([" 1", " 22 333", " four five six seven eight", " é", " 9 10 11 12 13 14 15 16 17"]):
        for q in ([" True", " False", " A B C D E F", "\n"] if i % 2 == 0 else [" yes"]):  # one query: a single child
            reqs.append(LoglikelihoodRequest(base + ctx, q))
    reqs.append(LoglikelihoodRequest(base + " 1 True", " again and again"))  # ends past a leaf: a single child
    reqs.append(LoglikelihoodRequest(base + " 1", " True again"))  # shares that single child's path
    reqs.append(LoglikelihoodRequest("", " lone"))
    return reqs


@pytest.mark.parametrize(("batch_size", "pack_tokens"), [(32, 1024), (3, 1024), (32, 6)])
def test_packed_siblings_match_unpacked_and_direct(
    model_dir: Path, batch_size: int, pack_tokens: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (3, ...) mixes parents of different lengths in one forward; (..., 6) splits one parent's siblings over rows
    monkeypatch.setattr("proctor.models.hf.tree.PACK_TOKENS", pack_tokens)
    reqs = _tree_requests()
    packed = HFModel(str(model_dir), batch_size=batch_size)
    plain = HFModel(str(model_dir), batch_size=batch_size, pack_siblings=False)
    assert packed.pack_siblings and not plain.pack_siblings
    assert packed.describe()["pack_siblings"] is True
    rp, rq = packed.loglikelihood_sync(reqs), plain.loglikelihood_sync(reqs)
    for req, a, b in zip(reqs, rp, rq):
        lp, n, greedy = _direct(packed, req)
        assert a.error is None and a.n_tokens == b.n_tokens == n
        assert abs(a.logprob - lp) <= 1e-4
        assert abs(a.logprob - b.logprob) <= 1e-5
        assert a.is_greedy == b.is_greedy == greedy
    assert packed.stats["tokens_forwarded"] == packed.stats["scheduled_tokens"] == plain.stats["scheduled_tokens"]
    assert packed.stats["tokens_forwarded"] == plain.stats["tokens_forwarded"]
    assert packed.stats["forward_calls"] == plain.stats["forward_calls"]  # same chunks, packed differently
    if batch_size == 32 and pack_tokens == 1024:  # siblings share a row: less padding than one row per edge
        assert packed.stats["tokens_padded"] < plain.stats["tokens_padded"]


def test_packing_needs_shared_prefixes(tiny_model_dir: Path) -> None:
    assert HFModel(str(tiny_model_dir), share_prefixes=False).pack_siblings is False


def test_packed_siblings_with_eager_attention(tiny_gpt2_dir: Path) -> None:
    # eager attention gets an additive float mask instead of sdpa's boolean one
    reqs = _tree_requests()
    packed = HFModel(str(tiny_gpt2_dir), batch_size=4)
    packed.model.set_attn_implementation("eager")
    plain = HFModel(str(tiny_gpt2_dir), batch_size=4, pack_siblings=False)
    for a, b in zip(packed.loglikelihood_sync(reqs), plain.loglikelihood_sync(reqs)):
        assert abs(a.logprob - b.logprob) <= 1e-5 and a.is_greedy == b.is_greedy and a.n_tokens == b.n_tokens


def test_sent_prompt_is_what_is_tokenized(tiny_model_dir: Path, tiny_gpt2_dir: Path) -> None:
    """#47: what a run records (`sent_prompt`) is what `render` tokenizes: a completion's text (its messages
    joined by blank lines, as `openai:` sends it), the messages through a chat template, or a text without one."""
    turns = (Message("system", "Be brief."), Message("user", "Question: 1 + 1?\nAnswer:"))
    llama, bare = HFModel(str(tiny_model_dir)), HFModel(str(tiny_gpt2_dir))
    bare.tokenizer.chat_template = None  # a base model's tokenizer: no chat template
    completion = GenerateRequest(turns, completion=True)
    assert llama.sent_prompt(completion) == "Be brief.\n\nQuestion: 1 + 1?\nAnswer:"
    assert llama.render(completion) == llama.encode("Be brief.\n\nQuestion: 1 + 1?\nAnswer:")
    chat = GenerateRequest(turns)
    assert llama.sent_prompt(chat) == [{"role": m.role, "content": m.content} for m in turns]
    assert bare.sent_prompt(chat) == "Be brief.\nQuestion: 1 + 1?\nAnswer:"
    assert bare.render(chat) == bare.encode("Be brief.\nQuestion: 1 + 1?\nAnswer:")


@pytest.fixture
def torch_threads() -> Any:
    import torch

    before = torch.get_num_threads()
    yield torch
    torch.set_num_threads(before)


def test_threads_are_one_on_a_busy_machine_unless_asked(torch_threads: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor.models.hf import backend

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(backend.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(backend.os, "getloadavg", lambda: (3.5, 3.0, 3.0))
    torch_threads.set_num_threads(4)
    assert backend.cpu_threads(None) == 1  # busy: torch's one-per-core default would crowd the other work
    torch_threads.set_num_threads(4)
    assert backend.cpu_threads(2) == 2  # asked: as asked
    monkeypatch.setattr(backend.os, "getloadavg", lambda: (0.2, 0.1, 0.1))
    torch_threads.set_num_threads(4)
    assert backend.cpu_threads(None) == 4  # idle: torch's default
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr(backend.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert backend.cpu_threads(None) == 4  # the user's OMP_NUM_THREADS is theirs
    with pytest.raises(ProctorError, match="threads must be at least 1"):
        backend.cpu_threads(0)


def test_the_threads_chosen_are_described(tiny_model_dir: Path, torch_threads: Any) -> None:
    assert HFModel(str(tiny_model_dir), threads=1).describe()["threads"] == 1
