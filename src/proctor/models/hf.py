"""`hf:<path-or-hub-id>` — a local transformers causal LM (torch/transformers are imported only here).

Log-likelihood, exactly:
* The scoring sequence is `prefix + tokenize(context + continuation)`, where `prefix` is the special
  tokens the tokenizer puts *before* text (BOS; special tokens it appends after text, e.g. EOS, are not
  used). The context's tokens are `prefix + tokenize(context)`.
* The continuation's tokens are the full sequence's tokens from the first position where it differs from
  the context's tokens (their longest common prefix). Usually that is exactly the tokens after the context;
  when the context's last token merges with the continuation's first characters (e.g. a trailing space
  in the context joining the next word), the merged token is scored. The continuation is never tokenized
  alone.
* When nothing precedes the first continuation token (no BOS and an empty context), the BOS token (else
  EOS) is put in front to condition on, as lm-evaluation-harness does.
* Sequences longer than `max_length` lose tokens from the left (the continuation is always kept whole).

Efficiency: every request's input sequence (all tokens but the last) is put in a token trie; each trie
edge is forwarded once, on the key/value cache of its parent node, up to `batch_size` edges per forward
pass. With `pack_siblings` (default; transformers' own model classes with eager or sdpa attention) the
sibling edges of one parent share one row: the parent's cache once, the siblings' tokens one after
another, a 4-D mask letting each token see the parent and its own edge's earlier tokens only (tree
attention), and position ids restarting at the parent's end for each sibling (docs/hf.md). Otherwise
each edge is its own row, with right padding, attention masks over padded parent caches and explicit
position ids. A suite's prompt is therefore run once, each context once, and each query once per
context. Logits are computed only at the positions that some request scores. Models with sliding-window
attention are run without sharing (one path per request).

Generation (docs/hf.md): requests are grouped by their settings (the seed aside) and effective
`max_new_tokens`, sorted by prompt length, and run `batch_size` at a time through `model.generate`,
left-padded by hand with an attention mask (generate derives position ids from it). Stop strings and
EOS are applied per row; sampling draws each row from its own seeded `torch.Generator`, so a seeded
request gives the same text in any batch. A batch that raises is halved until only the failing request
is an error record.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from jinja2 import TemplateError
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DynamicCache,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)
from transformers.cache_utils import DynamicLayer
from transformers.generation.logits_process import TopPLogitsWarper

from ..errors import ProctorError
from .base import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    ModelBase,
)

_PACK_TOKENS = 1024  # most tokens packed into one row (the tree mask is row x (parent + row) per row)
_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass
class _Node:
    """A trie edge: `tokens` follow the parent's sequence; requests score positions along the path."""

    tokens: list[int]
    start: int  # absolute position of tokens[0]
    children: dict[int, _Node] = field(default_factory=dict)  # keyed by first token
    # filled by the forward pass: logprob/greedy of the next in-edge token at each position but the last,
    # and of each possible next token after the last position
    inner: list[tuple[float, bool]] = field(default_factory=list)
    after: dict[int, tuple[float, bool]] = field(default_factory=dict)
    final_targets: set[int] = field(default_factory=set)  # tokens that end some request right after this node
    need_from: int | None = None  # first absolute position whose logits some request needs

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)


@dataclass
class _Job:
    index: int  # position in the caller's request list
    prompt: list[int]
    seed: int | None = None


@dataclass
class _Prepared:
    seq: list[int]  # full scoring sequence
    cont_start: int  # index of the first continuation token in seq
    error: str | None = None


class HFModel(ModelBase):
    """A transformers causal LM with batched, prefix-sharing log-likelihood and plain generation."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})

    def __init__(
        self,
        path: str,
        dtype: str = "auto",
        device: str = "cpu",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        max_length: int | None = None,
        share_prefixes: bool = True,
        pack_siblings: bool = True,
    ) -> None:
        self.name = f"hf:{path}"
        self.path = path
        if batch_size < 1:
            raise ProctorError(f"batch size must be at least 1, got {batch_size}")
        self.batch_size = batch_size
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
            raise ProctorError(f"device must be cpu, cuda or auto, got {device!r}")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ProctorError("device cuda asked for, but torch sees no CUDA device")
        self.device = torch.device(device)
        if dtype == "auto":
            torch_dtype = torch.float32 if self.device.type == "cpu" else torch.bfloat16
        elif dtype in _DTYPES:
            torch_dtype = _DTYPES[dtype]
        else:
            raise ProctorError(f"dtype must be auto, {', '.join(_DTYPES)}; got {dtype!r}")
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # proctor shows its own progress; keep loading quiet
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, trust_remote_code=trust_remote_code)
            self.model = model.to(self.device)  # type: ignore[arg-type]
        except (OSError, ValueError) as e:
            raise ProctorError(f"cannot load hf model {path!r}: {e}") from None
        self.model.eval()
        self.dtype = torch_dtype
        self.trust_remote_code = trust_remote_code
        cfg = self.model.config.get_text_config(decoder=True)
        limit = max_length or getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        self.max_length: int = int(limit or 2048)
        sliding = getattr(cfg, "sliding_window", None) is not None and "sliding_attention" in (
            getattr(cfg, "layer_types", None) or ["sliding_attention"]
        )
        self.share_prefixes = share_prefixes and not sliding
        # tree attention needs a model that takes a 4-D additive mask as-is: transformers' own classes with
        # eager or sdpa attention (flash kernels take no custom masks; remote code is not trusted to)
        native = type(self.model).__module__.startswith("transformers.")
        attn = getattr(self.model.config, "_attn_implementation", None)
        self._prefix = self._special_prefix()
        self._keeps_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self.pack_siblings = (pack_siblings and self.share_prefixes and self._keeps_logits and native
                              and attn in ("eager", "sdpa"))
        self._eos_ids = self._eos_token_ids()
        self.stats: dict[str, int] = {}
        self.reset_stats()

    # ------------------------------------------------------------------ tokenization
    def _special_prefix(self) -> list[int]:
        """The special tokens the tokenizer puts before any text (e.g. [BOS]); [] if none."""
        probe = "a b"
        plain = self.tokenizer(probe, add_special_tokens=False)["input_ids"]
        full = self.tokenizer(probe, add_special_tokens=True)["input_ids"]
        for k in range(len(full) - len(plain) + 1):
            if full[k : k + len(plain)] == plain:
                return list(full[:k])
        return []

    def encode(self, text: str) -> list[int]:
        """`prefix + tokenize(text)` — the token sequence the model conditions on."""
        return self._prefix + list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _start_token(self) -> int:
        tid = self.tokenizer.bos_token_id
        if tid is None:
            tid = self.tokenizer.eos_token_id
        if tid is None:
            raise ProctorError(f"{self.name}: an empty context needs a BOS or EOS token, and the tokenizer has neither")
        return int(tid)

    def prepare(self, req: LoglikelihoodRequest) -> _Prepared:
        """The scoring sequence and where its continuation starts (see the module docstring)."""
        return self.prepare_all([req])[0]

    def prepare_all(self, requests: Sequence[LoglikelihoodRequest]) -> list[_Prepared]:
        """`prepare` for many requests, tokenizing each distinct context once and all texts in one batch."""
        contexts = list(dict.fromkeys(r.context for r in requests))
        texts = contexts + [r.context + r.continuation for r in requests]
        ids = self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
        ctx_ids = dict(zip(contexts, ids[: len(contexts)]))
        return [
            self._boundary(self._prefix + list(ctx_ids[r.context]), self._prefix + list(full))
            for r, full in zip(requests, ids[len(contexts) :])
        ]

    def _boundary(self, ctx: list[int], seq: list[int]) -> _Prepared:
        p = 0
        for a, b in zip(ctx, seq):
            if a != b:
                break
            p += 1
        if p == len(seq):  # nothing to score
            return _Prepared(seq, p)
        if p == 0:
            seq, p = [self._start_token(), *seq], 1
        if len(seq) > self.max_length:
            n_cont = len(seq) - p
            if n_cont >= self.max_length:
                return _Prepared(seq, p, f"continuation has {n_cont} tokens; max_length is {self.max_length}")
            cut = len(seq) - self.max_length
            seq, p = seq[cut:], p - cut
        return _Prepared(seq, p)

    # ------------------------------------------------------------------ counters
    def reset_stats(self) -> None:
        """Zero the counters: tokens forwarded (real, and with padding), unique tokens, forward passes."""
        self.stats = {"tokens_forwarded": 0, "tokens_padded": 0, "unique_tokens": 0, "forward_calls": 0}

    # ------------------------------------------------------------------ log-likelihood
    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return await asyncio.to_thread(self.loglikelihood_sync, requests)

    def loglikelihood_sync(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Score every request; results are in request order."""
        prepared = self.prepare_all(requests)
        roots: dict[int, _Node] = {}
        live = [i for i, p in enumerate(prepared) if p.error is None and p.cont_start < len(p.seq)]
        for i in live:
            _insert(roots if self.share_prefixes else roots.setdefault(-1 - i, _Node([], 0)).children,
                    prepared[i].seq[:-1])
        if not self.share_prefixes:
            roots = {k: next(iter(v.children.values())) for k, v in roots.items()}
        paths: list[list[_Node] | None] = [None] * len(prepared)
        for i in live:  # walk the finished trie: mark what each request needs
            prep = prepared[i]
            path = _walk(roots if self.share_prefixes else {0: roots[-1 - i]}, prep.seq[:-1])
            _mark(path, prep.cont_start - 1)
            path[-1].final_targets.add(prep.seq[-1])
            paths[i] = path
        self.stats["unique_tokens"] += sum(_count(n) for n in roots.values())
        with torch.inference_mode():
            self._forward_level([(n, None) for n in roots.values()])
        out: list[Loglikelihood] = []
        for prep, maybe_path in zip(prepared, paths):
            if prep.error is not None:
                out.append(Loglikelihood(error=prep.error))
            elif maybe_path is None:
                out.append(Loglikelihood(logprob=0.0, n_tokens=0, is_greedy=True))
            else:
                out.append(_collect(maybe_path, prep))
        return out

    def _forward_level(self, items: list[tuple[_Node, Any]]) -> None:
        """Forward each node's edge on its parent's cache, `batch_size` edges at a time, then their children."""
        if not self.pack_siblings:
            items.sort(key=lambda it: (-it[0].start, -len(it[0].tokens)))
        else:  # siblings (same parent state) next to each other, longest first
            items.sort(key=lambda it: (-it[0].start, id(it[1]), -len(it[0].tokens)))
        for lo in range(0, len(items), self.batch_size):
            chunk = items[lo : lo + self.batch_size]
            states = self._forward_packed(chunk) if self.pack_siblings else self._forward_chunk(chunk)
            children = [(c, states[j]) for j, (n, _) in enumerate(chunk) for c in n.children.values()]
            if children:
                self._forward_level(children)

    def _forward_packed(self, chunk: list[tuple[_Node, Any]]) -> list[Any]:
        """One forward pass for `chunk`, siblings packed into one row each (tree attention).

        A row holds its parent's cache once, then its siblings' tokens one after another; a 4-D additive mask
        lets each token see the parent's keys and its own edge's earlier tokens only, and position ids restart
        at the parent's end for every sibling. Rows of different parents are padded to the longest parent
        (one copy per parent, none when the chunk has a single parent)."""
        rows: list[tuple[Any, list[tuple[_Node, int]]]] = []  # (parent state, [(node, offset in row)])
        row_len: list[int] = []
        for n, st in chunk:
            if rows and rows[-1][0] is st and row_len[-1] + len(n.tokens) <= max(_PACK_TOKENS, len(n.tokens)):
                rows[-1][1].append((n, row_len[-1]))
                row_len[-1] += len(n.tokens)
            else:
                rows.append((st, [(n, 0)]))
                row_len.append(len(n.tokens))
        b, q_max = len(rows), max(row_len)
        plens = [st[1] if st is not None else 0 for st, _ in rows]
        p_max = max(plens)
        dev = self.device
        ids = torch.zeros((b, q_max), dtype=torch.long)
        pos = torch.zeros((b, q_max), dtype=torch.long)
        allowed = torch.zeros((b, q_max, p_max + q_max), dtype=torch.bool)
        keep: set[int] = set()
        for r, ((st, members), plen) in enumerate(zip(rows, plens)):
            allowed[r, :, :plen] = True
            for n, o in members:
                k = len(n.tokens)
                ids[r, o : o + k] = torch.tensor(n.tokens)
                pos[r, o : o + k] = torch.arange(n.start, n.start + k)
                allowed[r, o : o + k, p_max + o : p_max + o + k] = torch.ones((k, k), dtype=torch.bool).tril()
                if n.need_from is not None:
                    keep.update(range(o + max(n.need_from - n.start, 0), o + k))
            for q in range(row_len[r], q_max):  # padding attends to itself only (no empty softmax rows)
                allowed[r, q, p_max + q] = True
        cols = sorted(keep) or [q_max - 1]
        col_of = {c: i for i, c in enumerate(cols)}
        if self.model.config._attn_implementation == "sdpa":  # sdpa takes a boolean mask (True: attend)
            mask = allowed
        else:  # eager adds the mask to the scores
            mask = torch.zeros(allowed.shape, dtype=self.dtype).masked_fill_(~allowed, torch.finfo(self.dtype).min)
        cache = None
        if p_max > 0:
            parents = [st for st, _ in rows]
            n_layers = len(next(p for p in parents if p is not None)[0])
            layers = []
            for layer in range(n_layers):
                if b == 1:
                    layers.append(parents[0][0][layer])  # the parent's own tensors: no copy
                    continue
                k0, v0 = next(p for p in parents if p is not None)[0][layer]
                ks = k0.new_zeros((b, k0.shape[1], p_max, k0.shape[-1]))
                vs = v0.new_zeros((b, v0.shape[1], p_max, v0.shape[-1]))
                for r, (st, plen) in enumerate(zip(parents, plens)):
                    if st is not None:
                        ks[r, :, :plen] = st[0][layer][0][0]
                        vs[r, :, :plen] = st[0][layer][1][0]
                layers.append((ks, vs))
            cache = _cache_of(layers)
        want_cache = any(n.children for n, _ in chunk)
        inputs = {"input_ids": ids.to(dev), "attention_mask": mask[:, None].to(dev), "position_ids": pos.to(dev),
                  "past_key_values": cache, "use_cache": want_cache}
        out = self.model(**inputs, logits_to_keep=torch.tensor(cols, device=dev))
        self.stats["forward_calls"] += 1
        self.stats["tokens_forwarded"] += sum(len(n.tokens) for n, _ in chunk)
        self.stats["tokens_padded"] += b * q_max
        logp = torch.log_softmax(out.logits.float(), dim=-1)  # [b, len(cols), V]
        top = logp.max(dim=-1).values
        states: dict[int, Any] = {}
        for r, (_, members) in enumerate(rows):
            for n, o in members:
                if n.need_from is not None:
                    _score(n, logp[r], top[r], [col_of.get(o + j, -1) for j in range(len(n.tokens))],
                           max(n.need_from - n.start, 0))
                if n.children:
                    states[id(n)] = (_child_layers(out.past_key_values, r, plens[r], p_max + o, len(n.tokens),
                                                   alone=len(members) == 1 and plens[r] == p_max), n.end)
        return [states.get(id(n)) for n, _ in chunk]

    def _forward_chunk(self, chunk: list[tuple[_Node, Any]]) -> list[Any]:
        nodes = [n for n, _ in chunk]
        parents = [s for _, s in chunk]
        b = len(nodes)
        past_lens = [n.start for n in nodes]
        p_max = max(past_lens)
        s_max = max(len(n.tokens) for n in nodes)
        dev = self.device
        ids = torch.zeros((b, s_max), dtype=torch.long)
        mask = torch.zeros((b, p_max + s_max), dtype=torch.long)
        pos = torch.zeros((b, s_max), dtype=torch.long)
        for i, n in enumerate(nodes):
            ids[i, : len(n.tokens)] = torch.tensor(n.tokens)
            mask[i, : n.start] = 1
            mask[i, p_max : p_max + len(n.tokens)] = 1
            pos[i] = torch.arange(n.start, n.start + s_max)
        cache = None
        if p_max > 0:
            n_layers = len(next(p for p in parents if p is not None)[0])
            layers = []
            for layer in range(n_layers):
                ks, vs = [], []
                for st, n in zip(parents, nodes):
                    k, v = st[0][layer]
                    pad = p_max - n.start
                    if pad:
                        k = torch.cat([k, k.new_zeros((*k.shape[:-2], pad, k.shape[-1]))], dim=-2)
                        v = torch.cat([v, v.new_zeros((*v.shape[:-2], pad, v.shape[-1]))], dim=-2)
                    ks.append(k)
                    vs.append(v)
                layers.append((torch.cat(ks, dim=0), torch.cat(vs, dim=0)))
            cache = DynamicCache(ddp_cache_data=layers)
        # logits only where some request scores: per row, positions from need_from to the edge's end
        firsts = [max(n.need_from - n.start, 0) if n.need_from is not None else None for n in nodes]
        keep_lo = min((f for f in firsts if f is not None), default=s_max - 1)
        want_cache = any(n.children for n in nodes)
        inputs = {"input_ids": ids.to(dev), "attention_mask": mask.to(dev), "position_ids": pos.to(dev),
                  "past_key_values": cache, "use_cache": want_cache}
        if self._keeps_logits:
            out = self.model(**inputs, logits_to_keep=torch.arange(keep_lo, s_max, device=dev))
        else:  # a model without `logits_to_keep` (older remote code): compute all, keep the same slice
            out = self.model(**inputs)
            out.logits = out.logits[:, keep_lo:]
        self.stats["forward_calls"] += 1
        self.stats["tokens_forwarded"] += sum(len(n.tokens) for n in nodes)
        self.stats["tokens_padded"] += b * s_max
        logp = torch.log_softmax(out.logits.float(), dim=-1)  # [b, s_max - keep_lo, V]
        top = logp.max(dim=-1).values
        for i, n in enumerate(nodes):
            f = firsts[i]
            if f is None:
                continue
            n.inner = [(0.0, True)] * len(n.tokens)
            for j in range(f, len(n.tokens) - 1):
                lp = float(logp[i, j - keep_lo, n.tokens[j + 1]])
                n.inner[j] = (lp, lp >= float(top[i, j - keep_lo]))
            last = len(n.tokens) - 1 - keep_lo
            targets = set(n.children) | n.final_targets
            for t in targets:
                lp = float(logp[i, last, t])
                n.after[t] = (lp, lp >= float(top[i, last]))
        if not want_cache:
            return [None] * b
        states: list[Any] = []
        pkv = out.past_key_values
        for i, n in enumerate(nodes):
            if not n.children:
                states.append(None)
                continue
            layers = []
            for layer in pkv.layers:
                k, v = layer.keys, layer.values
                sel_k = torch.cat([k[i : i + 1, :, : n.start], k[i : i + 1, :, p_max : p_max + len(n.tokens)]], dim=-2)
                sel_v = torch.cat([v[i : i + 1, :, : n.start], v[i : i + 1, :, p_max : p_max + len(n.tokens)]], dim=-2)
                layers.append((sel_k, sel_v))
            states.append((layers, n.end))
        return states

    # ------------------------------------------------------------------ generation
    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await asyncio.to_thread(self.generate_sync, requests)

    def generate_sync(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Generate for every request, batched (see the module docstring); results are in request order."""
        out: list[Generation | None] = [None] * len(requests)
        groups: dict[tuple[GenerationSettings, int], list[_Job]] = {}
        for i, req in enumerate(requests):
            try:
                prompt = self.render(req)
            except (ValueError, TypeError, KeyError, TemplateError) as e:
                out[i] = Generation(error=f"cannot render the prompt: {type(e).__name__}: {e}")
                continue
            budget = self.max_length - len(prompt)
            if budget <= 0:
                out[i] = Generation(error=f"prompt has {len(prompt)} tokens; max_length is {self.max_length}")
                continue
            s = req.settings
            max_new = budget if s.max_tokens is None else min(s.max_tokens, budget)
            if max_new <= 0:
                out[i] = Generation(text="", finish_reason="length", input_tokens=len(prompt), output_tokens=0)
                continue
            # the seed is per row (each row samples from its own generator), so it does not split batches
            groups.setdefault((replace(s, seed=None), max_new), []).append(_Job(i, prompt, s.seed))
        for (settings, max_new), jobs in groups.items():
            jobs.sort(key=lambda j: len(j.prompt))
            for lo in range(0, len(jobs), self.batch_size):
                batch = jobs[lo : lo + self.batch_size]
                for job, gen in zip(batch, self._run_batch(batch, settings, max_new)):
                    out[job.index] = gen
        return [g if g is not None else Generation(error="not generated") for g in out]

    def render(self, req: GenerateRequest) -> list[int]:
        """The prompt tokens: the chat template when the tokenizer has one, else the contents joined by newlines."""
        msgs = [{"role": m.role, "content": m.content} for m in req.messages]
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return self.encode("\n".join(m.content for m in req.messages))

    def _run_batch(self, jobs: list[_Job], settings: GenerationSettings, max_new: int) -> list[Generation]:
        """One batch; when it fails, its halves are retried so only the failing request becomes an error."""
        t0 = time.perf_counter()
        try:
            rows, stop_steps = self._generate_batch(jobs, settings, max_new)
        except (RuntimeError, ValueError, IndexError) as e:  # includes CUDA out-of-memory
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            if len(jobs) == 1:
                return [Generation(error=f"{type(e).__name__}: {e}", latency_s=time.perf_counter() - t0)]
            half = len(jobs) // 2
            return self._run_batch(jobs[:half], settings, max_new) + self._run_batch(jobs[half:], settings, max_new)
        wall = time.perf_counter() - t0
        return [self._finish(j, new, step, settings, wall) for j, new, step in zip(jobs, rows, stop_steps)]

    def _generate_batch(
        self, jobs: list[_Job], settings: GenerationSettings, max_new: int
    ) -> tuple[list[list[int]], list[int | None]]:
        """Left-padded `model.generate`: each row's new tokens, and the step a stop string appeared at."""
        width = max(len(j.prompt) for j in jobs)
        pad = self._pad_id()
        ids = torch.full((len(jobs), width), pad if pad is not None else 0, dtype=torch.long)
        mask = torch.zeros((len(jobs), width), dtype=torch.long)
        for r, j in enumerate(jobs):
            ids[r, width - len(j.prompt) :] = torch.tensor(j.prompt)
            mask[r, width - len(j.prompt) :] = 1
        stopper = _StopOnStrings(self.tokenizer, list(settings.stop), width, len(jobs))
        processors = LogitsProcessorList()
        if settings.temperature > 0:
            processors.append(_Sampler(settings, [self._generator(j.seed) for j in jobs]))
        kwargs: dict[str, Any] = {}
        if self._eos_ids:
            kwargs["eos_token_id"] = sorted(self._eos_ids)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),  # generate derives position ids from it
                max_new_tokens=max_new,
                do_sample=False,  # sampling, when asked for, is done by _Sampler with per-request generators
                temperature=None,
                top_p=None,
                top_k=None,
                logits_processor=processors,
                stopping_criteria=StoppingCriteriaList([stopper]),
                pad_token_id=pad,
                **kwargs,
            )
        return out[:, width:].tolist(), stopper.steps

    def _generator(self, seed: int | None) -> torch.Generator:
        """A generator of its own for one request: seeded ones repeat whatever batch they are in."""
        if seed is None:
            seed = int(torch.randint(0, 2**62, (1,)))
        return torch.Generator(device=self.device).manual_seed(seed)

    def _finish(
        self, job: _Job, new: list[int], stop_step: int | None, settings: GenerationSettings, wall: float
    ) -> Generation:
        """Cut a row at its first EOS or the step its stop string appeared, then the text at the earliest stop."""
        keep, finish = len(new), "length"
        eos_at = next((k for k, t in enumerate(new) if t in self._eos_ids), None)
        if eos_at is not None:
            keep, finish = eos_at + 1, "stop"
        if stop_step is not None and stop_step < keep:
            keep, finish = stop_step, "stop"
        tokens = new[:keep]
        if tokens and tokens[-1] in self._eos_ids:
            tokens = tokens[:-1]
        text = str(self.tokenizer.decode(tokens, skip_special_tokens=True))
        cuts = [text.index(x) for x in settings.stop if x and x in text]
        if cuts:
            text, finish = text[: min(cuts)], "stop"
        return Generation(
            text=text, finish_reason=finish, input_tokens=len(job.prompt), output_tokens=keep, latency_s=wall
        )

    def _eos_token_ids(self) -> set[int]:
        """The tokenizer's EOS and every EOS of the model's generation config (chat models often add some)."""
        ids: set[int] = set()
        cfg = getattr(self.model, "generation_config", None)
        for source in (self.tokenizer.eos_token_id, getattr(cfg, "eos_token_id", None)):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(t) for t in source)
        return ids

    def _pad_id(self) -> int | None:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        return None if pad is None else int(pad)

    def identity(self) -> dict[str, Any]:
        """Weights (local files fingerprint, or the hub commit), dtype, context limit and chat template."""
        from .base import weights_fingerprint

        template = getattr(self.tokenizer, "chat_template", None)
        return {
            "spec": self.name,
            "weights": weights_fingerprint(self.path) or getattr(self.model.config, "_commit_hash", None),
            "dtype": str(self.dtype).removeprefix("torch."),
            "max_length": self.max_length,
            "chat_template": hashlib.sha256(str(template).encode()).hexdigest()[:16] if template else None,
        }

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "path": self.path,
            "dtype": str(self.dtype).removeprefix("torch."),
            "device": str(self.device),
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "trust_remote_code": self.trust_remote_code,
            "share_prefixes": self.share_prefixes,
            "pack_siblings": self.pack_siblings,
            "transformers": __import__("transformers").__version__,
            "torch": torch.__version__,
        }


class _StopOnStrings(StoppingCriteria):
    """Stop each row once its new text contains a stop string; `steps[r]` is the number of new tokens then.

    Only the last `4 * longest stop + 16` new tokens are decoded each step (a character takes at most four
    byte-level tokens), so a step costs the same however long the output is."""

    def __init__(self, tokenizer: Any, stops: list[str], prompt_len: int, rows: int) -> None:
        self.tokenizer, self.stops, self.prompt_len = tokenizer, [s for s in stops if s], prompt_len
        self.window = 4 * max((len(s) for s in self.stops), default=0) + 16
        self.steps: list[int | None] = [None] * rows

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        if not self.stops:
            return done
        n = input_ids.shape[1] - self.prompt_len
        tail = input_ids[:, self.prompt_len + max(0, n - self.window) :].tolist()
        for r, row in enumerate(tail):
            if self.steps[r] is None:
                text = self.tokenizer.decode(row, skip_special_tokens=True)
                if any(s in text for s in self.stops):
                    self.steps[r] = n
            done[r] = self.steps[r] is not None
        return done


class _Sampler(LogitsProcessor):
    """Temperature and top-p, then one draw per row from that row's own generator, as a one-hot score row.

    HF's own sampling draws from the global RNG for the whole batch, so a request's sample would depend on
    its batch; here each request's draws come from its own `torch.Generator`, so a seeded request gives the
    same tokens alone or in any batch (greedy decoding of the one-hot row picks the drawn token)."""

    def __init__(self, settings: GenerationSettings, generators: list[torch.Generator]) -> None:
        self.temperature, self.top_p, self.generators = settings.temperature, settings.top_p, generators

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logits = scores.float() / self.temperature
        if self.top_p is not None and self.top_p < 1.0:
            logits = TopPLogitsWarper(self.top_p)(input_ids, logits)
        probs = torch.softmax(logits, dim=-1)
        picks = torch.stack([torch.multinomial(probs[r], 1, generator=g) for r, g in enumerate(self.generators)])
        return torch.full_like(scores, float("-inf")).scatter_(1, picks, 0.0)  # type: ignore[return-value]


def _insert(roots: dict[int, _Node], seq: list[int]) -> None:
    """Add `seq` to the trie, splitting an edge where `seq` leaves or ends inside it."""
    children, pos = roots, 0
    while pos < len(seq):
        node = children.get(seq[pos])
        if node is None:
            children[seq[pos]] = _Node(tokens=seq[pos:], start=pos)
            return
        k = 0
        while k < len(node.tokens) and pos + k < len(seq) and node.tokens[k] == seq[pos + k]:
            k += 1
        if k < len(node.tokens):  # head keeps [start, start + k), the tail takes the rest
            tail = _Node(tokens=node.tokens[k:], start=node.start + k, children=node.children)
            node.tokens, node.children = node.tokens[:k], {tail.tokens[0]: tail}
        pos = node.end
        children = node.children


def _walk(roots: dict[int, _Node], seq: list[int]) -> list[_Node]:
    """The nodes along `seq`'s path in a finished trie (`seq` ends exactly at a node's end)."""
    path, children, pos = [], roots, 0
    while pos < len(seq):
        node = children[seq[pos]]
        path.append(node)
        pos, children = node.end, node.children
    return path


def _mark(path: list[_Node], need_from: int) -> None:
    """Record that positions >= `need_from` along `path` need logits."""
    for n in path:
        if n.end > need_from:
            first = max(need_from, n.start)
            n.need_from = first if n.need_from is None else min(n.need_from, first)


def _cache_of(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> DynamicCache:
    """A DynamicCache holding `layers`' tensors themselves (building one from data would copy them)."""
    cache = DynamicCache(ddp_cache_data=[(k[..., :0, :], v[..., :0, :]) for k, v in layers])
    for layer, (k, v) in zip(cache.layers, layers):
        assert isinstance(layer, DynamicLayer)
        layer.keys, layer.values = k, v
    return cache


def _score(node: _Node, logp: torch.Tensor, top: torch.Tensor, col: list[int], first: int) -> None:
    """Fill `node.inner`/`node.after` from one row's log-probs; `col[j]` is the logits column of edge position j."""
    node.inner = [(0.0, True)] * len(node.tokens)
    for j in range(first, len(node.tokens) - 1):
        lp = float(logp[col[j], node.tokens[j + 1]])
        node.inner[j] = (lp, lp >= float(top[col[j]]))
    last = col[len(node.tokens) - 1]
    for t in set(node.children) | node.final_targets:
        lp = float(logp[last, t])
        node.after[t] = (lp, lp >= float(top[last]))


def _child_layers(pkv: Any, row: int, plen: int, at: int, k: int, alone: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """An edge's cache (parent's `plen` keys, then its own `k` at `at`) cut from a packed row's output cache.

    `alone`: the edge directly follows its parent's keys in the row, so the cache is a view, not a copy."""
    layers = []
    for layer in pkv.layers:
        kv = []
        for t in (layer.keys, layer.values):
            if alone or plen == 0:  # a view
                kv.append(t[row : row + 1, :, 0 if alone else at : at + k])
            else:
                kv.append(torch.cat([t[row : row + 1, :, :plen], t[row : row + 1, :, at : at + k]], dim=-2))
        layers.append((kv[0], kv[1]))
    return layers


def _count(node: _Node) -> int:
    return len(node.tokens) + sum(_count(c) for c in node.children.values())


def _collect(path: list[_Node], prep: _Prepared) -> Loglikelihood:
    total, greedy, n = 0.0, True, 0
    seq = prep.seq
    for idx, node in enumerate(path):
        for j in range(len(node.tokens)):
            a = node.start + j  # position whose logits predict seq[a + 1]
            if a + 1 < prep.cont_start:
                continue
            if j < len(node.tokens) - 1:
                lp, g = node.inner[j]
            else:
                nxt = seq[a + 1]
                lp, g = node.after[nxt]
            total += lp
            greedy = greedy and g
            n += 1
    return Loglikelihood(logprob=total, n_tokens=n, is_greedy=greedy)
