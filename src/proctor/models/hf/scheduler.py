"""The log-likelihood scheduler: plan what to share, then run shared subtrees and plain sequences.

1. Each request's input (its scoring sequence but the last token) goes into a prefix trie; identical inputs are
   one (their last tokens are all read from the same logits).
2. `trie.plan` keeps the edges whose sharing saves more than it costs and merges the rest into whole sequences.
3. Roots with children (a prefix worth sharing) run through `tree.forward_level`: the prefix once, the rest on
   its key/value cache. Roots without children (nothing worth sharing) run through `plain.forward_plain`:
   length-sorted, left-padded batches with plain causal attention and the LM head at scored positions only.
4. Every request's log-prob is summed along its path.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ...core import model as base
from ...util import progress
from .engine import Engine
from .plain import forward_plain
from .tokens import Prepared
from .tree import forward_level
from .trie import collect, count, mark, plan


def score_prepared(
    engine: Engine, prepared: list[Prepared], share: bool, pack: bool, pad_id: int, costs: tuple[int, int]
) -> list[base.Loglikelihood]:
    """Score every prepared request; results in the same order."""
    live = [i for i, p in enumerate(prepared) if p.error is None and p.cont_start < len(p.seq)]
    inputs = list({tuple(prepared[i].seq[:-1]): prepared[i].seq[:-1] for i in live}.values())
    forest, paths, unique = plan(inputs, share, costs)
    for i in live:
        prep = prepared[i]
        path = paths[tuple(prep.seq[:-1])]
        mark(path, prep.cont_start - 1)
        path[-1].final_targets.add(prep.seq[-1])
    engine.stats["unique_tokens"] += unique
    scheduled = sum(count(n) for n in forest.values())
    engine.stats["scheduled_tokens"] += scheduled
    progress.expect(tokens=scheduled)  # each forward pass reports its tokens: the bar moves per batch
    shared = [n for n in forest.values() if n.children]
    alone = [n for n in forest.values() if not n.children]
    engine.stats["shared_roots"] += len(shared)
    engine.stats["plain_sequences"] += len(alone)
    with torch.inference_mode():
        if shared:
            forward_level(engine, [(n, None) for n in shared], pack)
        if alone:
            forward_plain(engine, alone, pad_id)
    out: list[base.Loglikelihood] = []
    scored = set(live)
    for i, prep in enumerate(prepared):
        if prep.error is not None:
            out.append(base.Loglikelihood(error=prep.error))
        elif i not in scored:
            out.append(base.Loglikelihood(logprob=0.0, n_tokens=0, is_greedy=True, input_tokens=len(prep.seq)))
        else:
            out.append(replace(collect(paths[tuple(prep.seq[:-1])], prep), input_tokens=len(prep.seq)))
    return out
