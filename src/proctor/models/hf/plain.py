"""Whole sequences that share nothing worth sharing: one plain causal forward pass per batch.

Distinct inputs are sorted by length (longest first, so an out-of-memory shows at once) and cut into batches of at
most `batch_size` rows and `token_budget` padded tokens, a batch ending early where its padding would pass
`PAD_LIMIT`. Rows are left-padded, so every row ends at the last column
and the scored positions are the last few columns: the LM head runs on those only (`logits_to_keep`). A batch of
equal lengths passes no mask at all, so attention takes the fast causal kernels (SDPA's flash / memory-efficient
paths on CUDA); otherwise a 2-D padding mask and per-row position ids. No key/value cache is kept.
"""

from __future__ import annotations

import torch

from .engine import Engine, score, with_halving
from .trie import Node

PAD_LIMIT = 1.25  # a batch's padded tokens stay within this multiple of its real tokens


def forward_plain(engine: Engine, nodes: list[Node], pad_id: int) -> None:
    """Score every node (a whole input sequence starting at position 0) in length-sorted batches."""
    order = sorted(nodes, key=lambda n: -len(n.tokens))
    lo = 0
    while lo < len(order):
        width, hi, real = len(order[lo].tokens), lo + 1, len(order[lo].tokens)
        while hi < len(order) and hi - lo < engine.batch_size and (hi - lo + 1) * width <= engine.token_budget:
            if (hi - lo + 1) * width > PAD_LIMIT * (real + len(order[hi].tokens)):
                break  # a shorter row would make the batch mostly padding: start the next batch with it
            real += len(order[hi].tokens)
            hi += 1
        with_halving(engine, order[lo:hi], lambda batch: _batch(engine, batch, pad_id))
        lo = hi


def _batch(engine: Engine, nodes: list[Node], pad_id: int) -> list[None]:
    """One left-padded forward pass; fills each node's `inner` and `after`."""
    b, width = len(nodes), max(len(n.tokens) for n in nodes)
    ids = torch.full((b, width), pad_id, dtype=torch.long)
    mask = torch.zeros((b, width), dtype=torch.long)
    for r, n in enumerate(nodes):
        ids[r, width - len(n.tokens) :] = torch.tensor(n.tokens)
        mask[r, width - len(n.tokens) :] = 1
    # first column any row scores (positions before a row's need_from need no logits)
    lo = min(width - len(n.tokens) + max((n.need_from or 0) - n.start, 0) for n in nodes)
    dev = engine.device
    inputs: dict[str, torch.Tensor] = {"input_ids": ids.to(dev)}
    if any(len(n.tokens) < width for n in nodes):  # padding: mask it, and start each row's positions at 0
        inputs["attention_mask"] = mask.to(dev)
        inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(dev)
    if engine.keeps_logits:
        logits = engine.model(**inputs, use_cache=False, logits_to_keep=width - lo).logits
    else:
        logits = engine.model(**inputs, use_cache=False).logits[:, lo:]
    engine.count(b, width, sum(len(n.tokens) for n in nodes))
    shifts = [width - len(n.tokens) - lo for n in nodes]  # logits column of each node's position 0
    score(logits, [(r, n, [s + j for j in range(len(n.tokens))]) for r, (n, s) in enumerate(zip(nodes, shifts))])
    return [None] * b
