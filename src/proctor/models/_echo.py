"""Prompt log-probs as OpenAI-compatible completions servers echo them, and the continuation boundary.

With `echo=true, logprobs=1`, vLLM, SGLang and llama.cpp return, for every token of the prompt, its text,
its character offset (`text_offset`), its log-prob (`token_logprobs`, None for the first token) and the
top alternatives (`top_logprobs`).

Two ways to find a continuation's tokens in such an echo:

* `continuation_by_tokens` (what `openai:` uses): compare the echo of `context + continuation` with the
  echo of `context` alone; the continuation is the full echo from the first token where the two differ
  (their longest common prefix), the same rule as the `hf:` backend. It reads token strings only, never
  character offsets, so it holds whatever a server counts in `text_offset` (vLLM counts the text of the
  BOS token `<s>`, shifting every offset by 3).
* `continuation_score`: by character offsets, for token records whose offsets are exact (the scripted
  model's pseudo-tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Loglikelihood


@dataclass(frozen=True)
class TokenLogprob:
    """One token of a scored text: its string, character offset, log-prob and the top alternative."""

    token: str
    offset: int
    logprob: float | None  # None for the first token, which nothing predicts
    top_token: str
    top_logprob: float | None


def parse_echo_logprobs(logprobs: dict[str, Any]) -> list[TokenLogprob]:
    """Read a completions choice's `logprobs` object (tokens, token_logprobs, top_logprobs, text_offset)."""
    tokens, lps, offsets = logprobs["tokens"], logprobs["token_logprobs"], logprobs["text_offset"]
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    if not (len(tokens) == len(lps) == len(offsets) == len(tops)):
        raise ValueError("tokens, token_logprobs, top_logprobs and text_offset differ in length")
    out: list[TokenLogprob] = []
    for tok, lp, off, top in zip(tokens, lps, offsets, tops, strict=True):
        top_tok, top_lp = (max(top.items(), key=lambda kv: kv[1]) if top else (tok, lp))
        out.append(TokenLogprob(str(tok), int(off), None if lp is None else float(lp), str(top_tok),
                                None if top_lp is None else float(top_lp)))
    return out


def continuation_score(context: str, continuation: str, tokens: Sequence[TokenLogprob]) -> Loglikelihood:
    """Sum the log-probs of the continuation's tokens in a scored `context + continuation`.

    Boundary rule: token i spans the characters [offset_i, offset_i+1) (the last one runs to the end); it
    belongs to the continuation when that span overlaps [len(context), len(context + continuation)). So
    when the continuation starts at a token boundary (the usual case: it begins with a space) these are
    exactly the tokens whose offset is >= len(context); a token straddling the boundary counts as the
    continuation's; a token generated after the prompt (offset past the end) never counts. The very first
    token has no log-prob (nothing predicts it): a continuation that needs it is an error.
    """
    start, end = len(context), len(context) + len(continuation)
    ends = [t.offset for t in tokens[1:]] + [1 << 62]
    picked = [t for t, t_end in zip(tokens, ends, strict=True) if t.offset < end and t_end > start]
    if not picked:
        return Loglikelihood(error="the continuation is empty: nothing to score")
    if any(t.logprob is None for t in picked):
        return Loglikelihood(error="the continuation starts the text: its first token has no log-prob")
    logprob = sum(t.logprob for t in picked if t.logprob is not None)
    greedy = all(t.top_logprob is not None and t.logprob is not None and t.logprob >= t.top_logprob - 1e-6
                 for t in picked)
    return Loglikelihood(logprob=logprob, n_tokens=len(picked), is_greedy=greedy, input_tokens=len(tokens))


def prompt_tokens(choice: dict[str, Any], usage: dict[str, Any] | None) -> list[TokenLogprob]:
    """The echoed prompt's tokens of a completions choice, without any tokens generated after it.

    The prompt's length comes from `usage.prompt_tokens` (every server we know sends it), else from
    `usage.completion_tokens`; with neither, every echoed token is taken as the prompt's.
    """
    tokens = parse_echo_logprobs(choice["logprobs"])
    usage = usage or {}
    n_prompt = usage.get("prompt_tokens")
    if not isinstance(n_prompt, int) or isinstance(n_prompt, bool):
        n_gen = usage.get("completion_tokens")
        n_prompt = len(tokens) - n_gen if isinstance(n_gen, int) and not isinstance(n_gen, bool) else len(tokens)
    if not 0 <= n_prompt <= len(tokens):
        raise ValueError(f"usage.prompt_tokens is {n_prompt} but the echo has {len(tokens)} tokens")
    return tokens[:n_prompt]


def continuation_by_tokens(context: Sequence[TokenLogprob], full: Sequence[TokenLogprob]) -> Loglikelihood:
    """Score the continuation as the tokens of the echo of `context + continuation` (`full`) beyond the
    longest common prefix with the echo of `context` alone.

    Usually that prefix is the whole context echo (BOS included); when the context's last token merges
    with the continuation's first characters (a trailing space joining the next word), the merged token
    is the continuation's, as in the `hf:` backend. A continuation with no token of its own, or whose
    first token nothing predicts (no BOS and nothing before it), is an error, never a score.
    """
    p = 0
    for a, b in zip(context, full):
        if a.token != b.token:
            break
        p += 1
    picked = list(full[p:])
    if not picked:
        return Loglikelihood(error="the continuation adds no token to the context's echo: nothing to score")
    if any(t.logprob is None for t in picked):
        return Loglikelihood(error="the continuation starts the text (no BOS token and an empty context): "
                                   "its first token has no log-prob")
    logprob = sum(t.logprob for t in picked if t.logprob is not None)
    greedy = all(t.top_logprob is not None and t.logprob is not None and t.logprob >= t.top_logprob - 1e-6
                 for t in picked)
    return Loglikelihood(logprob=logprob, n_tokens=len(picked), is_greedy=greedy, input_tokens=len(full))
