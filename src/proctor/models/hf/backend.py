"""`HFModel`: the `hf:<path>` backend — loading, options, and the two entry points (docs/hf.md)."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import threading
from collections.abc import Sequence
from typing import Any

import torch
from jinja2 import TemplateError
from transformers import AutoModelForCausalLM, AutoTokenizer

from ...core.model import (
    Capability,
    GenerateRequest,
    Generation,
    Loglikelihood,
    LoglikelihoodRequest,
    ModelBase,
    weights_fingerprint,
)
from ...util.errors import ProctorError
from ..dtype import checkpoint_dtype, resolve_dtype
from .engine import Engine, default_token_budget
from .generate import GenerationMixin
from .scheduler import score_prepared
from .tokens import (
    Prepared,
    char_budget,
    longest_token_chars,
    prepare_all,
    special_prefix,
    start_token,
)
from .tool_calls import call_format
from .trie import CPU_COSTS, GPU_COSTS

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
STAT_KEYS = ("tokens_forwarded", "tokens_padded", "unique_tokens", "scheduled_tokens", "forward_calls", "shared_roots",
             "plain_sequences", "oom_splits")


class HFModel(GenerationMixin, ModelBase):
    """A transformers causal LM with scheduled (shared-prefix or plain) log-likelihood and batched generation."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})
    text_completion = True

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
        max_batch_tokens: int | None = None,
        prefix_costs: tuple[int, int] | None = None,
        threads: int | None = None,
    ) -> None:
        self.name, self.path, self.trust_remote_code = f"hf:{path}", path, trust_remote_code
        if batch_size < 1:
            raise ProctorError(f"batch size must be at least 1, got {batch_size}")
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise ProctorError(f"max_batch_tokens must be at least 1, got {max_batch_tokens}")
        self.batch_size = batch_size
        self.device = _device(device)
        self.threads = cpu_threads(threads) if self.device.type == "cpu" else None
        self.dtype = _dtype(dtype, self.device, path)
        self.tokenizer, self.model = _load(path, self.dtype, self.device, trust_remote_code)
        self.call_format = call_format(getattr(self.tokenizer, "chat_template", None))
        if self.call_format is not None:  # tool calling only where the template writes calls proctor reads
            self.capabilities = HFModel.capabilities | {Capability.TOOLS}
        cfg = self.model.config.get_text_config(decoder=True)
        limit = max_length or getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        self.max_length: int = int(limit or 2048)
        self.context_length = self.max_length  # the runner refuses prompts that cannot fit before asking
        sliding = getattr(cfg, "sliding_window", None) is not None and "sliding_attention" in (
            getattr(cfg, "layer_types", None) or ["sliding_attention"]
        )
        self.share_prefixes = share_prefixes and not sliding  # sliding windows: whole sequences only
        # the sharing cost model's (per child row, per edge) costs in tokens (proctor.models.hf.trie)
        self.prefix_costs = prefix_costs or (CPU_COSTS if self.device.type == "cpu" else GPU_COSTS)
        # tree attention needs a model that takes a 4-D mask as-is: transformers' own classes with eager or sdpa
        # attention (flash kernels take no custom masks; remote code is not trusted to)
        native = type(self.model).__module__.startswith("transformers.")
        attn = getattr(self.model.config, "_attn_implementation", None)
        keeps_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self.pack_siblings = pack_siblings and self.share_prefixes and keeps_logits and native and attn in ("eager", "sdpa")
        self._prefix = special_prefix(self.tokenizer)
        self.max_chars = char_budget(self.max_length, longest_token_chars(self.tokenizer))  # no prompt is longer
        self._eos_ids = self._eos_token_ids()
        budget = max_batch_tokens or default_token_budget(self.model, self.device, self.dtype, self.max_length)
        self.engine = Engine(self.model, self.device, self.dtype, batch_size, budget, keeps_logits)
        self._busy = threading.Lock()  # one call computes at a time: the runner's chunks queue up, in order
        self.stats: dict[str, int] = self.engine.stats
        self.reset_stats()

    # ------------------------------------------------------------------ tokenization
    def encode(self, text: str) -> list[int]:
        """`prefix + tokenize(text)` — the token sequence the model conditions on."""
        return self._prefix + list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_tokens(self, req: GenerateRequest) -> int:
        """How many tokens `req`'s prompt is, as this model sees it (chat template included); 0 when it cannot be
        rendered (generation then records why, per sample)."""
        try:
            return len(self.render(req))
        except (ValueError, TypeError, KeyError, TemplateError):
            return 0

    @property
    def has_tokenizer(self) -> bool:
        """`count_prompt_tokens` is exact: the model's own tokenizer (proctor.run.pricing.token_counter)."""
        return True

    def count_prompt_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer, its special prefix included."""
        return len(self.encode(text))

    def prepare(self, req: LoglikelihoodRequest) -> Prepared:
        """The scoring sequence and where its continuation starts (proctor.models.hf.tokens)."""
        return self.prepare_all([req])[0]

    def prepare_all(self, requests: Sequence[LoglikelihoodRequest]) -> list[Prepared]:
        """`prepare` for many requests, each distinct text tokenized once, all in one batch."""
        return prepare_all(self.tokenizer, self._prefix, requests, start_token(self.tokenizer), self.max_length,
                           self.max_chars)

    # ------------------------------------------------------------------ log-likelihood
    def reset_stats(self) -> None:
        """Zero the counters: tokens forwarded (real, and with padding), unique tokens, passes, the plan's choices."""
        self.stats.clear()
        self.stats.update(dict.fromkeys(STAT_KEYS, 0))

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return await asyncio.to_thread(self._one_at_a_time, self.loglikelihood_sync, requests)

    def loglikelihood_sync(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Score every request; results are in request order (proctor.models.hf.scheduler)."""
        return score_prepared(self.engine, self.prepare_all(requests), self.share_prefixes, self.pack_siblings,
                              self._pad_id() or 0, self.prefix_costs)

    # ------------------------------------------------------------------ generation
    @property
    def generation_chunk_size(self) -> int:
        """Items per runner call in a generation run: one batch, so each finished batch is logged at once
        (ctrl-C or kill -9 loses at most the batch in flight) and moves the bar."""
        return self.batch_size

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await asyncio.to_thread(self._one_at_a_time, self.generate_sync, requests)

    def _one_at_a_time(self, work: Any, requests: Sequence[Any]) -> list[Any]:
        with self._busy:
            return list(work(requests))

    def identity(self) -> dict[str, Any]:
        """Weights (local files fingerprint, or the hub commit), dtype, context limit and chat template."""
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
            "max_batch_tokens": self.engine.token_budget,
            "max_length": self.max_length,
            "trust_remote_code": self.trust_remote_code,
            "share_prefixes": self.share_prefixes,
            "pack_siblings": self.pack_siblings,
            "prefix_costs": list(self.prefix_costs),
            "threads": self.threads,
        }  # the torch and transformers versions are in the manifest's provenance (packages)


def cpu_threads(requested: int | None) -> int:
    """The CPU threads torch computes with, set: `requested`; else OMP_NUM_THREADS when set; else 1 on a busy
    machine (1-minute load at least its cores less one: torch's one-thread-per-core default then runs a small model
    about 10× slower, docs/hf.md), else torch's default."""
    if requested is not None:
        if requested < 1:
            raise ProctorError(f"threads must be at least 1, got {requested}")
        torch.set_num_threads(requested)
    elif not os.environ.get("OMP_NUM_THREADS") and _busy():
        torch.set_num_threads(1)
    return torch.get_num_threads()


def _busy() -> bool:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        return cores > 1 and os.getloadavg()[0] >= cores - 1
    except OSError:  # no load average on this platform
        return False


def _device(device: str) -> torch.device:
    """`cpu`, `cuda[:N]`, or `auto` (CUDA when torch sees one)."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise ProctorError(f"device must be cpu, cuda or auto, got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ProctorError("device cuda asked for, but torch sees no CUDA device")
    return torch.device(device)


def _dtype(dtype: str, device: torch.device, path: str) -> torch.dtype:
    """The dtype proctor's one policy gives `dtype` on `device` for the checkpoint at `path` (models/dtype.py)."""
    bf16 = device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0)  # as nvidia_bf16_supported
    name = resolve_dtype(dtype, device=device.type, checkpoint=checkpoint_dtype(path), bf16_supported=bf16)
    return DTYPES[name]


def _load(path: str, dtype: torch.dtype, device: torch.device, trust_remote_code: bool) -> tuple[Any, Any]:
    """The tokenizer and the model in eval mode on `device`; a clear error when either cannot be loaded."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # proctor shows its own progress
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, trust_remote_code=trust_remote_code)
        model = model.to(device)  # type: ignore[arg-type]
    except (OSError, ValueError) as e:
        raise ProctorError(f"cannot load hf model {path!r}: {e}") from None
    # proctor checks lengths itself (a prompt longer than max_length is an error record, said per sample); the
    # tokenizer's own "sequence length is longer than the specified maximum" warning would only repeat it
    getattr(tokenizer, "deprecation_warnings", {})["sequence-length-is-longer-than-the-specified-maximum"] = True
    model.eval()
    return tokenizer, model
