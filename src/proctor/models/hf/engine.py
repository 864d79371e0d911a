"""What every log-likelihood forward pass shares: the model, counters, the token budget, one-transfer scoring."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

from ...util import progress
from .trie import Node

T = TypeVar("T")
CPU_TOKEN_BUDGET = 16384  # tokens (rows x padded length) per forward pass on the CPU
MIN_TOKEN_BUDGET = 256


@dataclass
class Engine:
    """The model and the state of one backend's log-likelihood passes."""

    model: Any
    device: torch.device
    dtype: torch.dtype
    batch_size: int  # most rows (sequences or trie edges) per forward pass
    token_budget: int  # most tokens (rows x padded length) per forward pass; halved on out-of-memory
    keeps_logits: bool  # the model's forward takes `logits_to_keep`
    stats: dict[str, int] = field(default_factory=dict)

    def count(self, rows: int, width: int, real: int) -> None:
        """Record one forward pass of `rows` x `width` tokens, `real` of them not padding."""
        self.stats["forward_calls"] += 1
        self.stats["tokens_forwarded"] += real
        progress.report(tokens=real)  # the run's progress bar moves per forward pass (proctor.util.progress)
        self.stats["tokens_padded"] += rows * width
        if self.device.type == "cuda":
            self.stats["peak_memory_bytes"] = max(self.stats.get("peak_memory_bytes", 0),
                                                  torch.cuda.max_memory_allocated(self.device))


def default_token_budget(model: Any, device: torch.device, dtype: torch.dtype, max_length: int) -> int:
    """Tokens per forward pass: a fixed number on the CPU; on a GPU, what half its free memory holds.

    A token's activations are estimated as the hidden state's copies plus the MLP's intermediates; the key/value
    cache is counted too, since shared edges keep theirs for their children."""
    if device.type != "cuda":
        return max(CPU_TOKEN_BUDGET, max_length)
    cfg = model.config.get_text_config(decoder=True)
    hidden = int(getattr(cfg, "hidden_size", 4096))
    inter = int(getattr(cfg, "intermediate_size", None) or 4 * hidden)
    layers = int(getattr(cfg, "num_hidden_layers", 32))
    heads = int(getattr(cfg, "num_attention_heads", 32))
    kv_heads = int(getattr(cfg, "num_key_value_heads", None) or heads)
    width = torch.tensor([], dtype=dtype).element_size()
    per_token = (8 * hidden + 3 * inter) * width + 2 * layers * kv_heads * (hidden // heads) * width
    free, _ = torch.cuda.mem_get_info(device)
    return max(MIN_TOKEN_BUDGET, max_length, int(free * 0.5 // per_token))


def with_halving(engine: Engine, items: list[T], run: Callable[[list[T]], list[Any]]) -> list[Any]:
    """`run(items)`; on out-of-memory, halve the token budget and run each half (one item: re-raise)."""
    try:
        return run(items)
    except torch.OutOfMemoryError:
        if engine.device.type == "cuda":
            torch.cuda.empty_cache()
        if len(items) == 1:
            raise
        engine.token_budget = max(MIN_TOKEN_BUDGET, engine.token_budget // 2)
        engine.stats["oom_splits"] += 1
        half = len(items) // 2
        return with_halving(engine, items[:half], run) + with_halving(engine, items[half:], run)


def gather(logits: torch.Tensor, queries: list[tuple[int, int, int]]) -> list[tuple[float, bool]]:
    """log p(target) for each (row, col, target) of `logits` [rows, cols, vocab], and whether it is an argmax.

    The normaliser is taken in float32 on the device, once per distinct position; one device->host transfer."""
    if not queries:
        return []
    dev = logits.device
    slots: dict[tuple[int, int], int] = {}
    at = [slots.setdefault((r, c), len(slots)) for r, c, _ in queries]
    ur, uc = (torch.tensor(x, device=dev) for x in zip(*slots))
    picked = logits[ur, uc].float()  # [positions, vocab]
    lse, top = torch.logsumexp(picked, dim=-1), picked.max(dim=-1).values
    q, t = torch.tensor(at, device=dev), torch.tensor([x[2] for x in queries], device=dev)
    target = picked[q, t]
    values = torch.stack([target - lse[q], (target >= top[q]).float()], dim=1).tolist()
    return [(float(lp), g > 0.5) for lp, g in values]


def score(logits: torch.Tensor, placed: list[tuple[int, Node, list[int]]]) -> None:
    """Fill each node's `inner`/`after` from one pass's logits; `cols[j]` is the logits column of edge position j."""
    queries: list[tuple[int, int, int]] = []
    slots: list[tuple[Node, int | None, int]] = []  # (node, inner index or None for after, target)
    for r, n, cols in placed:
        if n.need_from is None:
            continue
        n.inner = [(0.0, True)] * len(n.tokens)
        for j in range(max(n.need_from - n.start, 0), len(n.tokens) - 1):
            queries.append((r, cols[j], n.tokens[j + 1]))
            slots.append((n, j, n.tokens[j + 1]))
        for t in n.next_tokens():
            queries.append((r, cols[len(n.tokens) - 1], t))
            slots.append((n, None, t))
    for (node, at, t), value in zip(slots, gather(logits, queries)):
        if at is None:
            node.after[t] = value
        else:
            node.inner[at] = value
