"""Tokenisation and the continuation boundary rule (docs/hf.md, "Log-likelihood: what is scored").

* The scoring sequence is `prefix + tokenize(context + continuation)`, where `prefix` is the special tokens the
  tokenizer puts *before* text (BOS; special tokens it appends after text, e.g. EOS, are not used). The
  context's tokens are `prefix + tokenize(context)`.
* The continuation's tokens are the full sequence's tokens from the first position where it differs from the
  context's tokens (their longest common prefix). Usually that is exactly the tokens after the context; when the
  context's last token merges with the continuation's first characters (a trailing space in the context joining
  the next word), the merged token is scored. The continuation is never tokenized alone.
* When nothing precedes the first continuation token (no BOS and an empty context), the BOS token (else EOS) is
  put in front to condition on, as lm-evaluation-harness does.
* Sequences longer than `max_length` lose tokens from the left (the continuation is always kept whole).
  Before anything is tokenized, a context longer than `max_chars` (the model's context times the longest token
  in characters, plus a margin) keeps only its last `max_chars` characters: those still make more than
  `max_length` tokens, so the same tokens survive the left cut, and a 30 MB prompt costs what its kept tail
  costs. A continuation that cannot fit on characters alone is an error without being tokenized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...core.model import LoglikelihoodRequest


@dataclass
class Prepared:
    """One request's scoring sequence, where its continuation starts, or why it cannot be scored."""

    seq: list[int]  # full scoring sequence
    cont_start: int  # index of the first continuation token in seq
    error: str | None = None


def special_prefix(tokenizer: Any) -> list[int]:
    """The special tokens the tokenizer puts before any text (e.g. [BOS]); [] if none."""
    probe = "a b"
    plain = tokenizer(probe, add_special_tokens=False)["input_ids"]
    full = tokenizer(probe, add_special_tokens=True)["input_ids"]
    for k in range(len(full) - len(plain) + 1):
        if full[k : k + len(plain)] == plain:
            return list(full[:k])
    return []


def start_token(tokenizer: Any) -> int | None:
    """What an empty context is conditioned on: BOS, else EOS (None: the tokenizer has neither)."""
    tid = tokenizer.bos_token_id
    if tid is None:
        tid = tokenizer.eos_token_id
    return None if tid is None else int(tid)


def tokenize_distinct(tokenizer: Any, texts: Sequence[str]) -> dict[str, list[int]]:
    """Each distinct text tokenized once (no special tokens), all in one batched call."""
    distinct = list(dict.fromkeys(texts))
    ids = tokenizer(distinct, add_special_tokens=False)["input_ids"] if distinct else []
    return {t: list(i) for t, i in zip(distinct, ids)}


CUT_MARGIN = 64  # tokens beyond max_length kept on the left of a clipped context (the cut word's tokens)


def longest_token_chars(tokenizer: Any) -> int:
    """An upper bound on the characters one token stands for: its longest vocabulary entry (byte-level and
    SentencePiece entries are at least as long as the text they decode to)."""
    return max((len(t) for t in tokenizer.get_vocab()), default=1) or 1


def char_budget(max_length: int, token_chars: int) -> int:
    """Characters of context that always make more than `max_length` tokens: what left truncation keeps."""
    return (max_length + CUT_MARGIN) * token_chars


def prepare_all(
    tokenizer: Any, prefix: list[int], requests: Sequence[LoglikelihoodRequest], start: int | None, max_length: int,
    max_chars: int | None = None,
) -> list[Prepared]:
    """Every request's `Prepared`, each distinct context and full text tokenized once, in one batch; contexts
    clipped on the left to `max_chars` characters first, continuations that cannot fit refused untokenized."""
    clipped = [_clip(r, max_chars) for r in requests]
    fits = [max_chars is None or len(r.continuation) <= max_chars for r in clipped]
    todo = [r for r, ok in zip(clipped, fits, strict=True) if ok]
    ids = tokenize_distinct(tokenizer, [r.context for r in todo] + [r.context + r.continuation for r in todo])
    return [
        boundary(prefix + ids[r.context], prefix + ids[r.context + r.continuation], start, max_length) if ok
        else Prepared([], 0, f"continuation of {len(r.continuation):,} characters cannot fit in max_length "
                             f"{max_length} tokens")
        for r, ok in zip(clipped, fits, strict=True)
    ]


def _clip(request: LoglikelihoodRequest, max_chars: int | None) -> LoglikelihoodRequest:
    if max_chars is None or len(request.context) <= max_chars:
        return request
    return replace(request, context=request.context[-max_chars:])


def boundary(ctx: list[int], seq: list[int], start: int | None, max_length: int) -> Prepared:
    """Split `seq` after its longest common prefix with `ctx`; condition on `start` when nothing precedes it."""
    p = 0
    for a, b in zip(ctx, seq):
        if a != b:
            break
        p += 1
    if p == len(seq):  # nothing to score
        return Prepared(seq, p)
    if p == 0:
        if start is None:
            return Prepared(seq, 0, "an empty context needs a BOS or EOS token, and the tokenizer has neither")
        seq, p = [start, *seq], 1
    if len(seq) > max_length:
        n_cont = len(seq) - p
        if n_cont >= max_length:
            return Prepared(seq, p, f"continuation has {n_cont} tokens; max_length is {max_length}")
        cut = len(seq) - max_length
        seq, p = seq[cut:], p - cut
    return Prepared(seq, p)
